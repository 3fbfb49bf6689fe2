"""TofuEval task 1 (Tang et al. 2024, App. F.1): for a (document, topic) and its summaries, the
annotator categorises the topic, labels every summary sentence consistent / inconsistent (with
an explanation for each inconsistent one), rates each summary's relevance 1-5 and may flag it as
"not a summary".

The screen is one form whose field names are also the draft's keys:
`topic_category`; per sentence `s-<pk>` and `e-<pk>`; per summary `r-<pk>` and `n-<pk>`.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.protocols import services
from annotation.protocols.models import Assignment, Protocol

CATEGORIES = [
    (
        "main",
        "Main topic",
        "The document discusses the topic at length; it is one of the things the document is about.",
    ),
    ("marginal", "Marginal topic", "The document mentions the topic, but only briefly or in passing."),
    ("irrelevant", "Irrelevant topic", "The document does not discuss the topic at all."),
]
LIKERT = [
    (5, "The summary is entirely about the topic and covers what matters about it."),
    (4, "Mostly about the topic; a little unrelated content, or a minor point missing."),
    (3, "Partly about the topic; it mixes in unrelated content or misses important points."),
    (2, "Mostly about other things; the topic is only touched on."),
    (1, "Not about the topic at all."),
]
LABELS = ("consistent", "inconsistent")
MAX_EXPLANATION = 5000


def summaries_in_order(assignment: Assignment) -> list:
    """The item's summaries in the assignment's recorded shuffled order, numbered for display,
    with their sentences (`sentence_list`). Summarizer names are never part of the screen."""
    summaries = {s.pk: s for s in assignment.item.summaries.prefetch_related("sentences")}
    ordered = [summaries[pk] for pk in assignment.summary_order if pk in summaries]
    ordered += [s for pk, s in sorted(summaries.items()) if pk not in assignment.summary_order]
    for position, summary in enumerate(ordered, 1):
        summary.position = position
        summary.sentence_list = list(summary.sentences.all())
    return ordered


def attach_fields(summaries: list, draft: dict, errors: dict) -> None:
    """Each field's draft value and error on its summary or sentence, for the task 1 template: a
    template cannot index a dict with a computed key, and looping over the draft per field made
    the page quadratic in its sentences (benchmarks/README.md, task1_page.py)."""
    for summary in summaries:
        summary.draft_relevance = str(draft.get(f"r-{summary.pk}", ""))
        summary.draft_not_summary = draft.get(f"n-{summary.pk}") == "on"
        summary.relevance_error = errors.get(f"r-{summary.pk}", "")
        for sentence in summary.sentence_list:
            sentence.draft_label = draft.get(f"s-{sentence.pk}", "")
            sentence.draft_explanation = draft.get(f"e-{sentence.pk}", "")
            sentence.label_error = errors.get(f"s-{sentence.pk}", "")
            sentence.explanation_error = errors.get(f"e-{sentence.pk}", "")


def field_names(summaries: list) -> set[str]:
    names = {"topic_category", "_focus"}
    for summary in summaries:
        names |= {f"r-{summary.pk}", f"n-{summary.pk}"}
        names |= {f"{kind}-{s.pk}" for s in summary.sentence_list for kind in ("s", "e")}
    return names


def clean_draft(raw: dict, summaries: list) -> dict:
    """Keep only this screen's fields, as strings of bounded length: a draft is untrusted input."""
    allowed = field_names(summaries)
    return {k: str(v)[:MAX_EXPLANATION] for k, v in (raw or {}).items() if k in allowed and v not in (None, "")}


def validate(draft: dict, summaries: list) -> dict[str, str]:
    """Messages by field for everything a submission still lacks (empty when complete)."""
    errors = {}
    if draft.get("topic_category") not in {value for value, _, _ in CATEGORIES}:
        errors["topic_category"] = "Choose whether the topic is main, marginal or irrelevant."
    for summary in summaries:
        for sentence in summary.sentence_list:
            label = draft.get(f"s-{sentence.pk}")
            if label not in LABELS:
                errors[f"s-{sentence.pk}"] = "Label this sentence consistent or inconsistent."
            elif label == "inconsistent" and not draft.get(f"e-{sentence.pk}", "").strip():
                errors[f"e-{sentence.pk}"] = "Explain why this sentence is inconsistent."
        if draft.get(f"n-{summary.pk}") != "on" and draft.get(f"r-{summary.pk}") not in {"1", "2", "3", "4", "5"}:
            errors[f"r-{summary.pk}"] = f"Rate the relevance of summary {summary.position} (or mark it not a summary)."
    return errors


@transaction.atomic
def submit(*, assignment: Assignment, draft: dict, client_token: str, user) -> Assignment:
    """Turn a complete draft into judgments and mark the assignment submitted.

    Idempotent on `client_token`: the same submission sent twice records once. Submitting again
    later (a correction) updates the labels and keeps their earlier values as revisions.
    """
    assignment = Assignment.objects.select_for_update().select_related("item__campaign").get(pk=assignment.pk)
    if assignment.item.campaign.protocol != Protocol.TOFUEVAL_TASK1:
        raise ValidationError("This assignment is not a TofuEval task 1 item.")
    if client_token and assignment.status == Assignment.Status.SUBMITTED and assignment.client_token == client_token:
        return assignment
    summaries = summaries_in_order(assignment)
    errors = validate(draft, summaries)
    if errors:
        raise ValidationError(errors)
    writer = services.JudgmentWriter(assignment, user)
    writer.record(dimension="topic_category", value=draft["topic_category"])
    for summary in summaries:
        for sentence in summary.sentence_list:
            label = draft[f"s-{sentence.pk}"]
            explanation = draft.get(f"e-{sentence.pk}", "").strip() if label == "inconsistent" else ""
            writer.record(
                dimension="consistency", summary=summary, sentence=sentence, value=label, explanation=explanation
            )
        flagged = draft.get(f"n-{summary.pk}") == "on"
        writer.record(dimension="not_a_summary", summary=summary, value=flagged)
        rating = draft.get(f"r-{summary.pk}")
        if rating and not flagged:
            writer.record(dimension="relevance", summary=summary, value=int(rating))
        elif writer.has("relevance", summary=summary):
            # A correction to "not a summary": the earlier rating no longer counts (it stays as history).
            writer.record(dimension="relevance", summary=summary, value=None)
    writer.flush()
    assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    assignment.client_token = client_token or ""
    assignment.draft = draft
    assignment.save(update_fields=["status", "submitted_at", "client_token", "draft"])
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment
