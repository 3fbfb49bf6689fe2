from decimal import Decimal

from rest_framework import serializers

from annotation.corpus import services as corpus
from annotation.corpus.models import Document, ImportJob, Summary, SummarySentence
from annotation.llm import services as llm
from annotation.llm.models import Job
from annotation.projects.models import Membership, Project


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="send as the header 'Authorization: Token <token>'")


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


class LlmJobRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Job.Kind.choices)
    endpoint = serializers.CharField(help_text="endpoint name")
    prompt = serializers.CharField(required=False, help_text="prompt slug[:version]; default: the kind's newest")
    params = serializers.DictField(required=False, help_text='e.g. {"n": 3}, {"campaign": 12}, {"rounds": 3}')
    budget_usd = serializers.DecimalField(max_digits=12, decimal_places=4, required=False, min_value=Decimal("0.0001"))


class LlmJobSerializer(serializers.ModelSerializer):
    endpoint = serializers.CharField(source="endpoint.name")
    prompt = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = ["id", "kind", "endpoint", "prompt", "params", "status", "budget_usd", "progress", "created_at"]

    def get_prompt(self, job) -> str | None:
        return f"{job.prompt.slug}:{job.prompt.version}" if job.prompt_id else None

    def get_progress(self, job) -> dict:
        row = llm.progress(job)
        return {k: (float(v) if k == "cost" else v) for k, v in row.items()}
