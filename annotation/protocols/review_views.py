"""Review screens of TofuEval task 1 labels (App. F.4) and error typing (App. G).

Only members who review (reviewers and leads) get these pages; anyone else gets 404. One page
per unit shows the source, the summary with the sentence marked, every annotator's label by
pseudonym and the unit's earlier decisions, with the one form its state calls for. The forms
work without JavaScript; static/js/review.js adds single-key shortcuts.
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.corpus.models import SummarySentence
from annotation.projects.decorators import project_view
from annotation.projects.models import Membership
from annotation.protocols import review
from annotation.protocols.models import Campaign, Item, ReviewDecision, TaxonomyLabel

QUEUE_NAMES = {"decide": "to decide", "check": "to check", "type": "to type"}


def review_campaign(project, pk) -> Campaign:
    return get_object_or_404(review.reviewable(Campaign.objects.filter(project=project)), pk=pk)


def review_unit(project, pk, item_pk, sentence_pk):
    """(campaign, item, sentence, unit) of a URL, or 404 when nobody labelled the sentence inconsistent."""
    campaign = review_campaign(project, pk)
    item = get_object_or_404(
        Item.objects.select_related("campaign__project", "document", "topic"), campaign=campaign, pk=item_pk
    )
    sentence = get_object_or_404(SummarySentence.objects.select_related("summary"), pk=sentence_pk, summary__items=item)
    unit = review.find_unit(item, sentence)
    if unit is None:
        raise Http404("This sentence is not waiting for review.")
    return campaign, item, sentence, unit


@require_GET
@project_view(Membership.can_review)
def queue(request, project, membership, pk):
    """A reviewer's three queues in a campaign, with counts."""
    campaign = review_campaign(project, pk)
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "queues": review.queues(campaign, request.user),
        "queue_names": QUEUE_NAMES,
        "reviewers": len(review.reviewers(project)),
    }
    return render(request, "protocols/review_queue.html", context)


@require_GET
@project_view(Membership.can_review)
def next_unit(request, project, membership, pk, name):
    """The first unit of one of the reviewer's queues, or the queue page when it is empty."""
    if name not in QUEUE_NAMES:
        raise Http404("No such queue.")
    campaign = review_campaign(project, pk)
    waiting = review.queues(campaign, request.user)[name]
    if not waiting:
        messages.info(request, f"Nothing left {QUEUE_NAMES[name]} in {campaign.name}.")
        return redirect("protocols:review_queue", slug=project.slug, pk=campaign.pk)
    first = waiting[0]
    return redirect(
        "protocols:review_unit", slug=project.slug, pk=campaign.pk, item=first.item_id, sentence=first.sentence_id
    )


def unit_page(request, project, membership, campaign, item, sentence, unit, *, form=None, errors=None, status=200):
    """The unit with the form its state calls for; `form` holds values sent back with `errors`."""
    decisions = review.history(item, unit.target)
    live = next((d for d in decisions if d.status in ReviewDecision.LIVE), None)
    typing = review.own_typing(item, unit.target, request.user)
    taxonomy = review.error_taxonomy(campaign)
    form = form or {}
    if typing and "codes" not in form:
        form = {**form, "codes": typing.value or [], "note": typing.explanation}
    context = {
        "project": project,
        "membership": membership,
        "campaign": campaign,
        "item": item,
        "document": item.document,
        "topic": item.topic,
        "summary_sentences": list(sentence.summary.sentences.order_by("index")),
        "sentence": sentence,
        "unit": unit,
        "state": unit.state(),
        "live": live,
        "sent_back": [d for d in decisions if d.status == ReviewDecision.Status.SENT_BACK],
        "labels": review.annotator_labels(item, unit.target),
        "own_decision": live is not None and live.reviewer_id == request.user.pk,
        "error_types": TaxonomyLabel.objects.filter(taxonomy=taxonomy).order_by("order") if taxonomy else [],
        "typing": typing,
        "typers": len(unit.typers),
        "reviewers": len(review.reviewers(project)),
        "form": form,
        "errors": errors or {},
        "general_error": (errors or {}).get("__all__", ""),
    }
    return render(request, "protocols/review_unit.html", context, status=status)


@require_GET
@project_view(Membership.can_review)
def unit(request, project, membership, pk, item, sentence):
    return unit_page(request, project, membership, *review_unit(project, pk, item, sentence))


def messages_by_field(error: ValidationError) -> dict[str, str]:
    if hasattr(error, "error_dict"):
        return {k: " ".join(v) for k, v in error.message_dict.items()}
    return {"__all__": " ".join(error.messages)}


@require_POST
@project_view(Membership.can_review)
def decide(request, project, membership, pk, item, sentence):
    campaign, item, sentence, unit = review_unit(project, pk, item, sentence)
    form = {"decision": request.POST.get("decision", ""), "note": request.POST.get("note", "")}
    try:
        review.decide(item=item, sentence=sentence, reviewer=request.user, **form)
    except ValidationError as error:
        unit = review.find_unit(item, sentence)
        context = (campaign, item, sentence, unit)
        return unit_page(request, project, membership, *context, form=form, errors=messages_by_field(error), status=400)
    messages.success(request, "Decision recorded; a second reviewer will check it.")
    return redirect("protocols:review_next", slug=project.slug, pk=campaign.pk, name="decide")


@require_POST
@project_view(Membership.can_review)
def check(request, project, membership, pk, item, sentence):
    campaign, item, sentence, unit = review_unit(project, pk, item, sentence)
    form = {"verdict": request.POST.get("verdict", ""), "check_note": request.POST.get("check_note", "")}
    try:
        if form["verdict"] not in {"confirm", "send_back"}:
            raise ValidationError({"verdict": "Choose whether to confirm the decision or send it back."})
        if unit.decision is None or unit.state() != "check":
            raise ValidationError("This decision has already been checked; reload to see it.")
        review.check_decision(
            decision=ReviewDecision.objects.get(pk=unit.decision["pk"]),
            checker=request.user,
            confirm=form["verdict"] == "confirm",
            note=form["check_note"],
        )
    except ValidationError as error:
        context = (campaign, item, sentence, review.find_unit(item, sentence))
        return unit_page(request, project, membership, *context, form=form, errors=messages_by_field(error), status=400)
    messages.success(request, "Decision confirmed." if form["verdict"] == "confirm" else "Decision sent back.")
    return redirect("protocols:review_next", slug=project.slug, pk=campaign.pk, name="check")


@require_POST
@project_view(Membership.can_review)
def types(request, project, membership, pk, item, sentence):
    campaign, item, sentence, unit = review_unit(project, pk, item, sentence)
    form = {"codes": request.POST.getlist("codes"), "note": request.POST.get("note", "")}
    try:
        review.type_errors(item=item, sentence=sentence, reviewer=request.user, **form)
    except ValidationError as error:
        context = (campaign, item, sentence, unit)
        return unit_page(request, project, membership, *context, form=form, errors=messages_by_field(error), status=400)
    messages.success(request, "Error types recorded.")
    return redirect("protocols:review_next", slug=project.slug, pk=campaign.pk, name="type")
