"""The annotation screens. An assignment opens only for its own annotator; anyone else gets 404."""

import functools
import json
import uuid

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.corpus.models import SeedSummary, Summary
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership, Role
from annotation.protocols import ambiguity, forms, results, services, setup, spans, summedits, tofueval, tofueval_task2
from annotation.protocols.models import Assignment, Campaign, Item, Protocol, Taxonomy

# Protocols whose screen is one module with TEMPLATE, clean_draft(raw, assignment) -> draft,
# screen(assignment, draft, errors) -> extra context, and submit(assignment=, draft=, client_token=, user=).
PLUGGED = {Protocol.AMBIGUITY: ambiguity, Protocol.SPANS: spans}
SCREENS = {
    Protocol.TOFUEVAL_TASK1: "protocols/task1.html",
    Protocol.TOFUEVAL_TASK2: "protocols/task2.html",
    Protocol.SUMMEDITS: "protocols/summedits.html",
    **{protocol: module.TEMPLATE for protocol, module in PLUGGED.items()},
}


def own_assignment(request, project, pk) -> Assignment:
    assignment = get_object_or_404(
        Assignment.objects.select_related("item__campaign", "item__document", "item__topic"),
        pk=pk,
        annotator=request.user,
        stage="annotate",
        item__campaign__project=project,
    )
    if assignment.item.campaign.protocol not in SCREENS or assignment.item.document.text_missing:
        raise Http404("This item has no annotation screen.")
    return assignment


def is_task2(assignment) -> bool:
    return assignment.item.campaign.protocol == Protocol.TOFUEVAL_TASK2


def is_summedits(assignment) -> bool:
    return assignment.item.campaign.protocol == Protocol.SUMMEDITS


def cleaned_draft(assignment, raw: dict, summaries: list) -> dict:
    if assignment.item.campaign.protocol in PLUGGED:
        return PLUGGED[assignment.item.campaign.protocol].clean_draft(raw, assignment)
    if is_summedits(assignment):
        seed = summedits.seed_of(assignment)
        return summedits.clean_draft(raw, list(assignment.summary_order or []), assignment.draft, seed)
    if is_task2(assignment):
        return tofueval_task2.clean_draft(raw, summaries, assignment.draft)
    return tofueval.clean_draft(raw, summaries)


def assignment_page(request, project, membership, assignment, *, draft=None, errors=None, status=200):
    summaries = tofueval.summaries_in_order(assignment)
    draft = assignment.draft if draft is None else draft
    tofueval.attach_fields(summaries, draft, errors or {})
    context = {
        "project": project,
        "membership": membership,
        "assignment": assignment,
        "item": assignment.item,
        "document": assignment.item.document,
        "topic": assignment.item.topic,
        "summaries": summaries,
        "draft": draft,
        "errors": errors or {},
        "categories": tofueval.CATEGORIES,
        "likert": tofueval.LIKERT,
        "client_token": uuid.uuid4().hex,
        "draft_url": reverse("protocols:assignment_draft", args=[project.slug, assignment.pk]),
        "submit_url": reverse("protocols:assignment_submit", args=[project.slug, assignment.pk]),
        "next_url": reverse("home"),  # back to the queues
    }
    if is_task2(assignment):
        context["task2"] = tofueval_task2.screen(draft, summaries, errors or {})
        context["max_key_points"] = tofueval_task2.MAX_KEY_POINTS
    if is_summedits(assignment):
        context["se"] = summedits.screen(assignment, draft, errors or {})
    if assignment.item.campaign.protocol in PLUGGED:
        context.update(PLUGGED[assignment.item.campaign.protocol].screen(assignment, draft, errors or {}))
    return render(request, SCREENS[assignment.item.campaign.protocol], context, status=status)


@require_GET
@project_view()
def assignment_screen(request, project, membership, pk):
    assignment = own_assignment(request, project, pk)
    if is_summedits(assignment):
        summedits.refresh_edits(assignment)
    return assignment_page(request, project, membership, assignment)


@require_POST
@project_view()
def assignment_draft(request, project, membership, pk):
    """Autosave: JSON {"version", "draft", "active_seconds_delta"} -> {"version"}, or 409 on a conflict."""
    assignment = own_assignment(request, project, pk)
    try:
        body = json.loads(request.body)
        version = int(body["version"])
        delta = float(body.get("active_seconds_delta") or 0)
        raw = body.get("draft", {})
        if not isinstance(raw, dict):
            raise ValueError("draft must be an object")
    except (ValueError, KeyError, TypeError) as error:
        return JsonResponse({"message": f"Bad autosave request: {error}"}, status=400)
    draft = cleaned_draft(assignment, raw, tofueval.summaries_in_order(assignment))
    try:
        saved = services.save_draft(
            assignment_id=assignment.pk, draft=draft, version=version, active_seconds_delta=delta
        )
    except services.DraftConflict as conflict:
        message = "This assignment was changed in another tab or window since you loaded it."
        return JsonResponse({"version": conflict.version, "draft": conflict.draft, "message": message}, status=409)
    return JsonResponse({"version": saved.draft_version, "saved_at": timezone.now().isoformat()})


@require_POST
@project_view()
def assignment_submit(request, project, membership, pk):
    """The form's submit: save what was sent, check it, record it; errors come back in place.

    Task 2 before its key points are committed: the form's buttons commit them (action=commit)
    or, without JavaScript, move or remove one (action=up-<k>, down-<k>, remove-<k>)."""
    assignment = own_assignment(request, project, pk)
    summaries = tofueval.summaries_in_order(assignment)
    draft = cleaned_draft(assignment, request.POST.dict(), summaries)
    token = request.POST.get("client_token", "")[:64]
    action = request.POST.get("action", "submit")
    page = functools.partial(assignment_page, request, project, membership)
    if not (assignment.status == Assignment.Status.SUBMITTED and assignment.client_token == token):
        if is_task2(assignment) and not tofueval_task2.is_committed(assignment.draft) and action != "commit":
            draft = tofueval_task2.rearrange(draft, action)
        try:
            version = int(request.POST.get("draft_version", -1))
            delta = float(request.POST.get("active_seconds") or 0) if assignment.active_seconds == 0 else 0
            assignment = services.save_draft(
                assignment_id=assignment.pk, draft=draft, version=version, active_seconds_delta=delta
            )
        except ValueError:
            errors = {"__all__": "The form was incomplete; reload the page."}
            return page(assignment, draft=draft, status=400, errors=errors)
        except services.DraftConflict as conflict:
            if conflict.draft != draft:
                message = "This assignment was changed in another tab since you loaded it; reload to see that version."
                return page(assignment, draft=draft, status=409, errors={"__all__": message})
            # a twin of this request (a double click, a resent form) stored the very same draft
            # first: nothing differs, so there is no conflict to show; submit() is idempotent
            assignment.refresh_from_db()
    try:
        if is_task2(assignment) and not tofueval_task2.is_committed(assignment.draft):
            if action == "commit":
                tofueval_task2.commit_key_points(assignment=assignment)
            return redirect("protocols:assignment", slug=project.slug, pk=assignment.pk)
        if is_summedits(assignment) and not summedits.verified(assignment.draft):
            assignment = summedits.verify(assignment=assignment, user=request.user)
            if summedits.verified(assignment.draft) == "fail":
                messages.info(
                    request,
                    "The seed is set aside: "
                    + "; ".join(summedits.failure_reasons(assignment.draft, summedits.seed_of(assignment)))
                    + ".",
                )
                return redirect("protocols:next", slug=project.slug, pk=assignment.item.campaign_id)
            return redirect("protocols:assignment", slug=project.slug, pk=assignment.pk)
        submits = {Protocol.TOFUEVAL_TASK2: tofueval_task2.submit, Protocol.SUMMEDITS: summedits.submit}
        submits |= {protocol: module.submit for protocol, module in PLUGGED.items()}
        submit = submits.get(assignment.item.campaign.protocol, tofueval.submit)
        submit(assignment=assignment, draft=draft, client_token=token, user=request.user)
    except ValidationError as error:
        errors = error.message_dict if hasattr(error, "error_dict") else {"__all__": " ".join(error.messages)}
        errors = {k: v[0] if isinstance(v, list) else v for k, v in errors.items()}
        assignment.refresh_from_db()
        return page(assignment, draft=draft, errors=errors, status=400)
    messages.success(request, "Submitted.")
    return redirect("protocols:next", slug=project.slug, pk=assignment.item.campaign_id)


@require_GET
@project_view()
def next_assignment(request, project, membership, pk):
    """The annotator's next open item in a campaign, or home when the queue is done."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk)
    if campaign.protocol == Protocol.EXPLANATION_RATING:
        return redirect("protocols:explanations_next", slug=project.slug, pk=campaign.pk)
    assignment = services.next_open(campaign=campaign, user=request.user)
    if assignment is None:
        messages.info(request, f"Nothing left to do in {campaign.name}.")
        return redirect("home")
    return redirect("protocols:assignment", slug=project.slug, pk=assignment.pk)


@require_GET
@project_view(Membership.can_read_dashboards)
def campaign_results(request, project, membership, pk):
    """TofuEval results (Table 6, Figure 2); `manage.py results --json` prints the same."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk, protocol__in=results.PROTOCOLS)
    context = {"project": project, "membership": membership, "campaign": campaign, "tables": results.results(campaign)}
    return render(request, "protocols/results.html", context)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def new_summedits_campaign(request, project, membership):
    domains = sorted(SeedSummary.objects.filter(summary__project=project).values_list("domain", flat=True).distinct())
    form = forms.SummEditsCampaignForm(
        request.POST or None,
        domains=domains,
        annotators=list(project.memberships.people().filter(role=Role.ANNOTATOR).select_related("user")),
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            campaign = summedits.create_campaign(
                project=project,
                name=data["name"],
                slug=slugify(data["name"])[:80] or "summedits",
                domain=data["domain"],
                annotators=[form.people[pk] for pk in data["annotators"]],
                double_share=data["double_share"],
                edits_per_seed=data["edits_per_seed"],
                generation=data["generation"],
                endpoint=data["endpoint"],
                warmup=data["warmup"],
            )
        except ValidationError as error:
            for field_name, problems in error.message_dict.items():
                form.add_error(field_name if field_name in form.fields else None, problems)
        else:
            count = Assignment.objects.filter(item__campaign=campaign).count()
            messages.success(request, f"{campaign.name}: {campaign.items.count()} seeds, {count} assignments.")
            return redirect("projects:detail", slug=project.slug)
    context = {"project": project, "membership": membership, "form": form, "protocol": Protocol.SUMMEDITS}
    return render(request, "protocols/new_campaign.html", context, status=400 if form.errors else 200)


NEW_CAMPAIGN = {
    "tofueval-task1": Protocol.TOFUEVAL_TASK1,
    "tofueval-task2": Protocol.TOFUEVAL_TASK2,
    "ambiguity": Protocol.AMBIGUITY,
    "spans": Protocol.SPANS,
}


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def new_campaign(request, project, membership, task):
    if task not in NEW_CAMPAIGN:
        raise Http404("No such kind of campaign.")
    protocol = Protocol(NEW_CAMPAIGN[task])
    summaries = Summary.objects.filter(project=project).order_by()
    form = forms.TofuEvalCampaignForm(
        request.POST or None,
        protocol=protocol,
        datasets=sorted(summaries.values_list("document__dataset", flat=True).distinct()),
        splits=sorted(summaries.values_list("document__split", flat=True).distinct()),
        systems=sorted(summaries.values_list("system", flat=True).distinct()),
        annotators=list(project.memberships.people().filter(role=Role.ANNOTATOR).select_related("user")),
    )
    if request.method == "POST" and form.is_valid():
        try:
            campaign = setup.create_campaign(project=project, plan=form.plan())
        except ValidationError as error:
            for field_name, problems in error.message_dict.items():
                form.add_error(field_name if field_name in form.fields else None, problems)
        else:
            count = Assignment.objects.filter(item__campaign=campaign).count()
            messages.success(request, f"{campaign.name}: {campaign.items.count()} items, {count} assignments.")
            return redirect("projects:detail", slug=project.slug)
    context = {"project": project, "membership": membership, "form": form, "protocol": protocol}
    return render(request, "protocols/new_campaign.html", context, status=400 if form.errors else 200)


@require_GET
@project_view(Membership.can_manage)
def campaign_progress(request, project, membership, pk):
    campaign = get_object_or_404(Campaign, project=project, pk=pk)
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "progress": results.progress(campaign),
    }
    if campaign.protocol == Protocol.SUMMEDITS:
        context["waiting_seeds"] = len(summedits.verified_seeds_without_edits(campaign))
    return render(request, "protocols/progress.html", context)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_manage)
def summedits_warmup(request, project, membership, pk):
    """A lead's gold labels for the warm-up seeds, and each annotator's warm-up accuracy."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.SUMMEDITS)
    items = list(campaign.items.filter(is_warmup=True).prefetch_related("summaries").order_by("key"))
    if request.method == "POST":
        item = next((i for i in items if str(i.pk) == request.POST.get("item")), None)
        if item is None:
            raise Http404("No such warm-up seed.")
        labels = {}
        for key, value in request.POST.items():
            if key.startswith("l-") and key[2:].isdigit():
                labels[int(key[2:])] = value
        try:
            count = summedits.set_gold(item=item, labels=labels, user=request.user)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        else:
            messages.success(request, f"Gold labels saved for {count} edits of {item.key}.")
        return redirect("protocols:summedits_warmup", slug=project.slug, pk=campaign.pk)
    seeds = []
    for item in items:
        seed = SeedSummary.objects.select_related("summary").get(summary__in=item.summaries.all())
        answers = summedits.gold(item)
        edits = Summary.objects.filter(edit__seed=seed).order_by("pk")
        rows = [
            {
                "edit": e,
                "name": f"l-{e.pk}",
                "value": answers.get(e.pk, ""),
                "diff": summedits.worddiff.diff(seed.summary.text, e.text),
            }
            for e in edits
        ]
        seeds.append({"item": item, "seed": seed, "rows": rows, "done": len(answers)})
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "seeds": seeds,
        "labels": summedits.LABELS,
        "accuracy": summedits.warmup_accuracy(campaign),
    }
    return render(request, "protocols/summedits_warmup.html", context)


@require_http_methods(["GET", "POST"])
@project_view(Membership.can_review)
def summedits_edit_types(request, project, membership, pk):
    """A reviewer tags inconsistent edits with their SummEdits edit types, one after another."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.SUMMEDITS)
    queue = summedits.typing_queue(campaign, request.user)
    errors = {}
    if request.method == "POST":
        item = get_object_or_404(Item, campaign=campaign, pk=request.POST.get("item") or 0)
        try:
            summedits.type_edit(
                item=item,
                edit_id=int(request.POST.get("edit") or 0),
                reviewer=request.user,
                codes=request.POST.getlist("codes"),
            )
        except (ValidationError, ValueError) as error:
            errors = (
                error.message_dict
                if hasattr(error, "error_dict")
                else {"codes": " ".join(getattr(error, "messages", [str(error)]))}
            )
            errors = {k: v[0] if isinstance(v, list) else v for k, v in errors.items()}
        else:
            return redirect("protocols:summedits_edit_types", slug=project.slug, pk=campaign.pk)
    current = None
    if queue:
        item_id, edit_id = queue[0]
        edit = Summary.objects.select_related("document", "edit__seed__summary").get(pk=edit_id)
        seed = edit.edit.seed.summary
        current = {"item": item_id, "edit": edit, "seed": seed, "diff": summedits.worddiff.diff(seed.text, edit.text)}
    taxonomy = Taxonomy.objects.filter(slug=summedits.TYPES_TAXONOMY).order_by("-version").first()
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "current": current,
        "remaining": len(queue),
        "labels": taxonomy.labels.all() if taxonomy else [],
        "errors": errors,
        "document": current["edit"].document if current else None,
    }
    return render(request, "protocols/summedits_edit_types.html", context, status=400 if errors else 200)


@require_POST
@project_view(Membership.can_manage)
def summedits_generate(request, project, membership, pk):
    """A lead starts the edits of every verified seed still waiting for them (batch generation)."""
    campaign = get_object_or_404(Campaign, project=project, pk=pk, protocol=Protocol.SUMMEDITS)
    try:
        job = summedits.generate_batch(campaign=campaign)
    except ValidationError as error:
        messages.info(request, " ".join(error.messages))
        return redirect("protocols:progress", slug=project.slug, pk=campaign.pk)
    messages.success(request, f"Generating edits for {len(job.params['seeds'])} verified seeds.")
    return redirect("llm:job", slug=project.slug, pk=job.pk)
