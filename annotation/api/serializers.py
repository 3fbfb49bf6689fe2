from rest_framework import serializers

from annotation.corpus import services as corpus
from annotation.corpus.models import Document, ImportJob, Summary, SummarySentence
from annotation.projects.models import Membership, Project


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")
    pseudonym = serializers.SerializerMethodField(help_text="Only for leads: who carries which pseudonym.")

    class Meta:
        model = Membership
        fields = ["username", "role", "pseudonym", "is_external"]

    def get_pseudonym(self, membership) -> str | None:
        return membership.pseudonym if self.context.get("show_pseudonyms") else None


class ProjectSerializer(serializers.ModelSerializer):
    my_role = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["slug", "name", "description", "created_at", "my_role"]

    def get_my_role(self, project) -> str | None:
        roles = self.context.get("roles", {})
        return roles.get(project.pk)


class DocumentSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")

    class Meta:
        model = Document
        fields = ["id", "dataset", "split", "kind", "text", "turns", "text_missing", "meta"]


class SentenceSerializer(serializers.ModelSerializer):
    class Meta:
        model = SummarySentence
        fields = ["index", "start", "end", "text"]


class SummarySerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")
    document = serializers.CharField(source="document.external_id")
    topic = serializers.CharField(source="topic.name", allow_null=True, default=None)
    sentences = SentenceSerializer(many=True)

    class Meta:
        model = Summary
        fields = ["id", "document", "topic", "system", "origin", "text", "sentences", "provenance"]


class ImportJobSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ImportJob
        fields = ["id", "format", "status", "progress", "errors", "warnings", "counts", "created_at", "finished_at"]

    def get_progress(self, job) -> dict:
        return corpus.import_progress(job)


class ImportRequestSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=sorted(corpus.FORMATS))
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)
    documents = serializers.FileField(required=False, help_text="tofueval: JSONL of {doc_id, turns}")


class AgreementSerializer(serializers.Serializer):
    status = serializers.CharField()
    stale = serializers.BooleanField(source="is_stale")
    as_of = serializers.DateTimeField(source="computed_at", allow_null=True)
    progress = serializers.IntegerField(source="percent_done")
    filters = serializers.JSONField()
    metrics = serializers.SerializerMethodField()

    def get_metrics(self, snapshot) -> list[dict]:
        return (snapshot.results or {}).get("metrics", [])
