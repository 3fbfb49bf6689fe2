"""The JSON API: the same services as the HTML views, scoped by membership."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from annotation.agreement import services as agreement
from annotation.agreement import views as agreement_views
from annotation.api import serializers
from annotation.api.idempotency import ANSWERS as IDEMPOTENCY_ANSWERS
from annotation.api.idempotency import PARAMETER as IDEMPOTENCY_KEY
from annotation.api.idempotency import idempotent
from annotation.api.permissions import project_for
from annotation.api.schema import PATH, PATH_WITH_ID, responses
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

    @extend_schema(
        request=AuthTokenSerializer, responses=responses({200: serializers.TokenSerializer}, 400, 429), auth=[]
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)


@extend_schema_view(get=extend_schema(responses=responses({200: serializers.ProjectSerializer}, 403, 404)))
class ProjectList(generics.ListAPIView):
    serializer_class = serializers.ProjectSerializer

    def get_queryset(self):
        return projects.projects_for(self.request.user).order_by("slug")

    def get_serializer_context(self):
        roles = dict(Membership.objects.filter(user=self.request.user).values_list("project_id", "role"))
        return {**super().get_serializer_context(), "roles": roles}


class ProjectDetail(APIView):
    @extend_schema(parameters=PATH, responses=responses({200: serializers.ProjectSerializer}, 403, 404))
    def get(self, request, slug):
        project, membership = project_for(request, slug)
        data = serializers.ProjectSerializer(project, context={"roles": {project.pk: membership.role}}).data
        return Response(data)


@extend_schema_view(
    get=extend_schema(parameters=PATH, responses=responses({200: serializers.MembershipSerializer}, 403, 404))
)
class ProjectMembers(generics.ListAPIView):
    serializer_class = serializers.MembershipSerializer

    def get_queryset(self):
        project, self.membership = project_for(self.request, self.kwargs["slug"])
        return projects.members(project)

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "show_pseudonyms": self.membership.can_manage()}


@extend_schema_view(
    get=extend_schema(parameters=PATH, responses=responses({200: serializers.DocumentSerializer}, 403, 404))
)
class DocumentList(generics.ListAPIView):
    serializer_class = serializers.DocumentSerializer

    def get_queryset(self):
        project, _ = project_for(self.request, self.kwargs["slug"], allowed=lambda m: m.can_browse_corpus())
        return Document.objects.filter(project=project).order_by("external_id")


@extend_schema_view(
    get=extend_schema(parameters=PATH, responses=responses({200: serializers.SummarySerializer}, 403, 404))
)
class SummaryList(generics.ListAPIView):
    serializer_class = serializers.SummarySerializer

    def get_queryset(self):
        project, _ = project_for(self.request, self.kwargs["slug"], allowed=lambda m: m.can_browse_corpus())
        rows = Summary.objects.filter(project=project).select_related("document", "topic")
        return rows.prefetch_related("sentences").order_by("external_id")


class Export(APIView):
    @extend_schema(parameters=PATH, responses=responses({(200, "application/x-ndjson"): OpenApiTypes.STR}, 403, 404))
    def get(self, request, slug):
        """The project as JSONL (see the README for the format), streamed from one snapshot."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_export())
        return corpus_views.export_response(project)


class ImportCreate(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        request=serializers.ImportRequestSerializer,
        parameters=[*PATH, IDEMPOTENCY_KEY],
        responses=responses({202: serializers.ImportJobSerializer}, 400, 403, 404) | IDEMPOTENCY_ANSWERS,
    )
    @idempotent
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
    @extend_schema(parameters=PATH_WITH_ID, responses=responses({200: serializers.ImportJobSerializer}, 403, 404))
    def get(self, request, slug, pk):
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        job = get_object_or_404(ImportJob, project=project, pk=pk)
        return Response(serializers.ImportJobSerializer(job).data)


class CampaignAgreement(APIView):
    @extend_schema(
        responses=responses({200: serializers.AgreementSerializer}, 400, 403, 404),
        parameters=[
            *PATH_WITH_ID,
            OpenApiParameter("round", str, description="only the items of this round (default: all)"),
            OpenApiParameter("dataset", str, description="only the documents of this dataset (default: all)"),
            OpenApiParameter("exclude", str, many=True, description="leave out these annotators (pseudonyms)"),
        ],
    )
    def get(self, request, slug, pk):
        """The dashboard's figures (as of the last recompute; a stale snapshot is being recomputed).

        `round`, `dataset` and `exclude` take the campaign's own values only (as on the dashboard):
        anything else is refused, so a made-up filter never creates a snapshot or a recompute."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_read_dashboards())
        campaign = get_object_or_404(Campaign, project=project, pk=pk)
        form = agreement_views.filter_form(request, campaign)
        if request.query_params and not form.is_valid():
            return Response(form.errors, status=status.HTTP_400_BAD_REQUEST)
        snapshot = agreement.dashboard(campaign, form.filters())
        return Response(serializers.AgreementSerializer(snapshot).data)


class LlmJobCreate(APIView):
    @extend_schema(
        request=serializers.LlmJobRequestSerializer,
        parameters=[*PATH, IDEMPOTENCY_KEY],
        responses=responses({202: serializers.LlmJobSerializer}, 400, 403, 404) | IDEMPOTENCY_ANSWERS,
    )
    @idempotent
    def post(self, request, slug):
        """Start an LLM job (leads); poll the returned job for progress, tokens and cost."""
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        payload = serializers.LlmJobRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        endpoint = Endpoint.objects.usable_by(project).filter(name=data["endpoint"]).first()
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
    @extend_schema(parameters=PATH_WITH_ID, responses=responses({200: serializers.LlmJobSerializer}, 403, 404))
    def get(self, request, slug, pk):
        project, _ = project_for(request, slug, allowed=lambda m: m.can_manage())
        job = get_object_or_404(Job.objects.select_related("endpoint", "prompt"), project=project, pk=pk)
        return Response(serializers.LlmJobSerializer(job).data)
