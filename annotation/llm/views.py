"""LLM pages. Prompts are instance-wide: staff and project leads edit them. An endpoint is either
shared (staff and the command line change it; leads see and use it) or a project's own (its leads
change it, its jobs alone use it): only they can set a base URL. Jobs belong to a project and its leads."""

import json
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.http import Http404, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from annotation.api.idempotency import first_sending
from annotation.llm import forms, judging, kinds, prompts, services
from annotation.llm.models import Endpoint, Job, Prompt, Unit
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership, Project, Role
from annotation.protocols import explanations

FAILURES_SHOWN = 50
OUTPUTS_SHOWN = 20


def led_projects(user):
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user, memberships__role=Role.LEAD, memberships__is_external=False)


def llm_manager(view):
    """Staff and leads of any project; everyone else gets 404."""

    @wraps(view)
    @login_required
    def wrapper(request, *args, **kwargs):
        if not (request.user.is_staff or led_projects(request.user).exists()):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapper


# -- endpoints ----------------------------------------------------------------------------------
@require_http_methods(["GET", "POST"])
@llm_manager
def endpoints(request):
    form = forms.EndpointForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        endpoint = form.save(commit=False)
        endpoint.created_by = request.user
        endpoint.save()
        messages.success(request, f"Endpoint {endpoint.name} added.")
        return redirect("llm:endpoints")
    rows = Endpoint.objects.visible_to(request.user).select_related("project").annotate(job_count=Count("jobs"))
    context = {"endpoints": rows, "form": form}
    return render(request, "llm/endpoints.html", context, status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
@llm_manager
def endpoint_edit(request, pk):
    """Another project's endpoint is 404; a shared one is read-only for leads (403 on a change)."""
    endpoint = get_object_or_404(Endpoint.objects.visible_to(request.user).select_related("project"), pk=pk)
    editable = endpoint.can_be_changed_by(request.user)
    if request.method == "POST" and not editable:
        return HttpResponseForbidden("A shared endpoint is changed by staff or on the command line.")
    form = forms.EndpointForm(request.POST or None, instance=endpoint, user=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, f"Endpoint {endpoint.name} saved.")
        return redirect("llm:endpoints")
    context = {"endpoint": endpoint, "form": form, "editable": editable}
    return render(request, "llm/endpoint_edit.html", context, status=400 if form.errors else 200)


# -- prompts ------------------------------------------------------------------------------------
@require_GET
@llm_manager
def prompt_list(request):
    latest = {}
    for prompt in Prompt.objects.order_by("slug", "-version"):
        latest.setdefault(prompt.slug, prompt)
    return render(request, "llm/prompts.html", {"prompts": list(latest.values())})


@require_http_methods(["GET", "POST"])
@llm_manager
def prompt_detail(request, slug):
    versions = list(Prompt.objects.filter(slug=slug).order_by("-version").annotate(job_count=Count("jobs")))
    if not versions:
        raise Http404("No such prompt.")
    shown = versions[0]
    if request.GET.get("version", "").isdigit():
        shown = next((p for p in versions if p.version == int(request.GET["version"])), shown)
    latest = versions[0]
    initial = {"name": latest.name, "system": latest.system, "template": latest.template, "based_on": latest.version}
    form = forms.PromptForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            created = services.new_prompt_version(slug=slug, user=request.user, **form.cleaned_data)
        except ValidationError as error:
            for field, problems in (
                error.message_dict.items() if hasattr(error, "error_dict") else [(None, error.messages)]
            ):
                form.add_error(field if field in form.fields else None, problems)
        else:
            messages.success(request, f"Saved as version {created.version}.")
            return redirect("llm:prompt", slug=slug)
    projects = led_projects(request.user).order_by("name")
    chosen = projects.filter(slug=request.GET.get("project")).first() or projects.first()
    preview = None
    if chosen is not None:
        found = kinds.preview_values(shown.kind, chosen)
        if found:
            values, what = found
            try:
                preview = {"messages": prompts.messages(shown, values), "what": what}
            except prompts.MissingValue as error:
                preview = {"error": str(error), "what": what}
    context = {
        "prompt": shown,
        "latest": latest,
        "versions": versions,
        "form": form,
        "projects": projects,
        "chosen": chosen,
        "preview": preview,
        "available": sorted(prompts.AVAILABLE.get(latest.kind, ())),
    }
    return render(request, "llm/prompt.html", context, status=400 if form.errors else 200)


# -- jobs ---------------------------------------------------------------------------------------
@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def job_list(request, project, membership):
    form = forms.JobForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():  # one job per endpoint, all or none
                if not first_sending(request.user, data["request_key"], request.path):
                    messages.info(request, "This form was already sent: its jobs are listed below.")
                    return redirect("llm:jobs", slug=project.slug)
                started = [
                    services.create_job(
                        project=project,
                        kind=data["kind"],
                        endpoint=endpoint,
                        prompt=data["prompt"],
                        params=form.params(),
                        budget_usd=data["budget_usd"],
                        user=request.user,
                    )
                    for endpoint in data["endpoints"]
                ]
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                field = "endpoints" if field == "endpoint" else field
                form.add_error(field if field in form.fields else None, problems)
        else:
            for job in started:
                messages.success(request, f"{job} on {job.endpoint.name} started: {job.units.count()} units.")
            if len(started) == 1:
                return redirect("llm:job", slug=project.slug, pk=started[0].pk)
            return redirect("llm:jobs", slug=project.slug)
    jobs = (
        Job.objects.filter(project=project)
        .select_related("endpoint", "prompt")
        .annotate(
            total=Count("units"),
            done=Count("units", filter=Q(units__status=Unit.Status.DONE)),
            failed=Count("units", filter=Q(units__status=Unit.Status.FAILED)),
        )
    )
    context = {"project": project, "membership": membership, "jobs": jobs, "form": form}
    return render(request, "llm/jobs.html", context, status=400 if form.errors else 200)


@require_GET
@project_view(Membership.can_manage)
def job_detail(request, project, membership, pk):
    """The job page; htmx polls its status partial every 2 s and stops (286) once the job is over."""
    job = get_object_or_404(Job.objects.select_related("endpoint", "prompt", "created_by"), project=project, pk=pk)
    context = {
        "project": project,
        "membership": membership,
        "job": job,
        "progress": services.progress(job),
        "failures": job.units.filter(status=Unit.Status.FAILED).order_by("key")[:FAILURES_SHOWN],
        "retrying": job.units.filter(status=Unit.Status.RUNNING).exclude(error="").order_by("key")[:10],
        "outputs": job.units.filter(status=Unit.Status.DONE).order_by("finished_at", "pk")[:OUTPUTS_SHOWN],
        "resume_form": forms.ResumeForm(),
    }
    if job.kind in (Job.Kind.JUDGE, Job.Kind.DEBATE) and context["progress"]["done"]:
        context["scores"] = judging.judge_scores(job)
    if request.htmx:
        response = render(request, "llm/job.html#status", context)
        return response if job.is_open() else HttpResponseStopPolling(response.content)
    if job.kind == Job.Kind.JUDGE:
        context["explanation_ratings"] = explanations.shares_for_job(job)
    return render(request, "llm/job.html", context)


@require_POST
@project_view(Membership.can_manage)
def job_cancel(request, project, membership, pk):
    job = get_object_or_404(Job, project=project, pk=pk)
    try:
        services.cancel(job=job)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, f"{job} cancelled.")
    return redirect("llm:job", slug=project.slug, pk=job.pk)


@require_POST
@project_view(Membership.can_manage)
def job_resume(request, project, membership, pk):
    job = get_object_or_404(Job, project=project, pk=pk)
    form = forms.ResumeForm(request.POST)
    if form.is_valid():
        try:
            services.resume(job=job, **form.cleaned_data)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, f"{job} resumed.")
    else:
        messages.error(request, "Check the budget: " + " ".join(e for errors in form.errors.values() for e in errors))
    return redirect("llm:job", slug=project.slug, pk=job.pk)


@require_GET
@project_view(Membership.can_manage)
def unit_detail(request, project, membership, pk, unit_pk):
    """One unit: its result, error and raw output; a debate as a readable transcript."""
    job = get_object_or_404(Job.objects.select_related("endpoint", "prompt"), project=project, pk=pk)
    unit = get_object_or_404(Unit, job=job, pk=unit_pk)
    transcript = None
    if job.kind == Job.Kind.DEBATE and unit.raw_output:
        try:
            transcript = json.loads(unit.raw_output)
        except ValueError:
            transcript = None
    context = {"project": project, "membership": membership, "job": job, "unit": unit, "transcript": transcript}
    return render(request, "llm/unit.html", context)
