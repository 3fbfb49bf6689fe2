"""The JSON API: the same services as the HTML views, scoped by membership."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from annotation.agreement import services as agreement
from annotation.api import serializers
from annotation.api.permissions import project_for
from annotation.corpus import services as corpus
from annotation.corpus import views as corpus_views
from annotation.corpus.models import Document, ImportJob, Summary
from annotation.llm import services as llm
from annotation.llm.models import Endpoint, Job, Prompt
from annotation.projects import services as projects
from annotation.projects.models import Membership
from annotation.protocols.models import Campaign


class ObtainToken(ObtainAuthToken):
    """Username and password for a token; throttled like the login form (guessing passwords)."""

    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token"


class ProjectList(generics.ListAPIView):
    serializer_class = serializers.ProjectSerializer

    def get_queryset(self):
        return projects.projects_for(self.request.user).order_by("slug")

    def get_serializer_context(self):
        roles = dict(Membership.objects.filter(user=self.request.user).values_list("project_id", "role"))
        return {**super().get_serializer_context(), "roles": roles}


class ProjectDetail(APIView):
    @extend_schema(responses=serializers.ProjectSerializer)
    def get(self, request, slug):
        project, membership = project_for(request, slug)
        data = serializers.ProjectSerializer(project, context={"roles": {project.pk: membership.role}}).data
        return Response(data)


class ProjectMembers(generics.ListAPIView):
    serializer_class = serializers.MembershipSerializer

    def get_queryset(self):
        project, self.membership = project_for(self.request, self.kwargs["slug"])
        return projects.members(project)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "show_pseudonyms": self.membership.can_manage()}


class DocumentList(generics.ListAPIView):
    serializer_class = serializers.DocumentSerializer

    def get_queryset(self):
        project, _ = project_for(self.request, self.kwargs["slug"], allowed=lambda m: m.can_browse_corpus())
        return Document.objects.filter(project=project).order_by("external_id")


class SummaryList(generics.ListAPIView):
    serializer_class = serializers.SummarySerializer

    def get_queryset(self):
        project, _ = project_for(self.request, self.kwargs["slug"], allowed=lambda m: m.can_browse_corpus())
        rows = Summary.objects.filter(project=project).select_related("document", "topic")
        return rows.prefetch_related("sentences").order_by("external_id")


class Export(APIView):
    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    def get(self, request, slug):
        """The project as JSONL (see the README for the format), streamed from one snapshot."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_export())
        return corpus_views.export_response(project)


class ImportCreate(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(request=serializers.ImportRequestSerializer, responses={202: serializers.ImportJobSerializer})
    def post(self, request, slug):
        """Queue an import (all or nothing); poll the returned job for progress and errors."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        payload = serializers.ImportRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        files = list(payload.validated_data["files"])
        options = {}
        if payload.validated_data.get("documents"):
            files.append(payload.validated_data["documents"])
            options["documents_name"] = payload.validated_data["documents"].name
        try:
            job = corpus.start_import(
                project=project,
                user=request.user,
                format=payload.validated_data["format"],
                files=files,
                options=options,
            )
        except DjangoValidationError as error:
            return Response(error.message_dict, status=status.HTTP_400_BAD_REQUEST)
        return Response(serializers.ImportJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ImportDetail(APIView):
    @extend_schema(responses=serializers.ImportJobSerializer)
    def get(self, request, slug, pk):
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        job = get_object_or_404(ImportJob, project=project, pk=pk)
        return Response(serializers.ImportJobSerializer(job).data)


class CampaignAgreement(APIView):
    @extend_schema(responses=serializers.AgreementSerializer)
    def get(self, request, slug, pk):
        """The dashboard's figures (as of the last recompute; a stale snapshot is being recomputed)."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_read_dashboards())
        campaign = get_object_or_404(Campaign, project=project, pk=pk)
        filters = {"round": request.query_params.get("round", ""), "dataset": request.query_params.get("dataset", "")}
        snapshot = agreement.dashboard(campaign, filters)
        return Response(serializers.AgreementSerializer(snapshot).data)


class LlmJobCreate(APIView):
    @extend_schema(request=serializers.LlmJobRequestSerializer, responses={202: serializers.LlmJobSerializer})
    def post(self, request, slug):
        """Start an LLM job (leads); poll the returned job for progress, tokens and cost."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        payload = serializers.LlmJobRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        endpoint = Endpoint.objects.filter(name=data["endpoint"]).first()
        if endpoint is None:
            return Response({"endpoint": [f"No endpoint {data['endpoint']!r}."]}, status=status.HTTP_400_BAD_REQUEST)
        prompt = None
        if data.get("prompt"):
            slug_part, _, version = data["prompt"].partition(":")
            prompts = Prompt.objects.filter(slug=slug_part).order_by("-version")
            prompt = prompts.filter(version=int(version)).first() if version.isdigit() else prompts.first()
            if prompt is None:
                return Response({"prompt": [f"No prompt {data['prompt']!r}."]}, status=status.HTTP_400_BAD_REQUEST)
        try:
            job = llm.create_job(
                project=project,
                kind=data["kind"],
                endpoint=endpoint,
                prompt=prompt,
                params=data.get("params") or {},
                budget_usd=data.get("budget_usd"),
                user=request.user,
            )
        except DjangoValidationError as error:
            detail = error.message_dict if hasattr(error, "error_dict") else {"non_field_errors": error.messages}
            return Response(detail, status=status.HTTP_400_BAD_REQUEST)
        return Response(serializers.LlmJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class LlmJobDetail(APIView):
    @extend_schema(responses=serializers.LlmJobSerializer)
    def get(self, request, slug, pk):
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        job = get_object_or_404(Job.objects.select_related("endpoint", "prompt"), project=project, pk=pk)
        return Response(serializers.LlmJobSerializer(job).data)
