from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseStopPolling

from annotation.corpus import forms, queries, services
from annotation.corpus.models import Document, ImportJob
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership

DOCUMENTS_PER_PAGE = 50


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def import_form(request, project, membership):
    form = forms.ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            job = services.start_import(
                project=project,
                user=request.user,
                format=form.cleaned_data["format"],
                files=form.uploads(),
                options=form.options(),
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            return redirect("corpus:import_job", slug=project.slug, pk=job.pk)
    context = {"project": project, "membership": membership, "form": form}
    return render(request, "corpus/import.html", context, status=400 if form.errors else 200)


@require_GET
@project_view(Membership.can_manage)
def import_job(request, project, membership, pk):
    """The job's status; htmx polls it every 2s for the status partial until the job finishes."""
    job = get_object_or_404(ImportJob.objects.select_related("created_by"), project=project, pk=pk)
    context = {"project": project, "membership": membership, "job": job, "progress": services.import_progress(job)}
    if not request.htmx:
        response = render(request, "corpus/import_job.html", context)
    elif job.is_finished():
        response = HttpResponseStopPolling(render(request, "corpus/import_job.html#status", context).content)
    else:
        response = render(request, "corpus/import_job.html#status", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_GET
@project_view(Membership.can_export)
def export(request, project, membership):
    return export_response(project)


def export_response(project) -> StreamingHttpResponse:
    """The JSONL download, for this page and the API alike."""
    response = StreamingHttpResponse(services.export_lines(project=project), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="{services.export_filename(project)}"'
    return response


@require_GET
@project_view(Membership.can_browse_corpus)
def documents(request, project, membership):
    rows = Document.objects.filter(project=project)
    form = forms.DocumentFilterForm(request.GET, datasets=distinct(rows, "dataset"), splits=distinct(rows, "split"))
    listed = (
        form.filter(rows).only("pk", "external_id", "dataset", "split", "kind", "text_missing").order_by("external_id")
    )
    page = Paginator(listed.annotate(summary_count=Count("summaries")), DOCUMENTS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {"project": project, "membership": membership, "form": form, "page": page}
    return render(request, "corpus/documents.html", context)


@require_GET
@project_view(Membership.can_browse_corpus)
def document(request, project, membership, pk):
    """One document with its topics, summaries, sentences and every judgment made on them."""
    doc = get_object_or_404(Document.objects.prefetch_related("topics"), project=project, pk=pk)
    context = {"project": project, "membership": membership, "document": doc, "summaries": queries.summaries_of(doc)}
    return render(request, "corpus/document.html", context)


def distinct(queryset, field: str) -> list[str]:
    return list(queryset.order_by(field).values_list(field, flat=True).distinct())
