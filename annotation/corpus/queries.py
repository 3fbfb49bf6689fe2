"""Read-side queries of the corpus pages."""

import json
from collections import defaultdict

from django.db.models import Q

from annotation.corpus.models import Document
from annotation.projects.models import Membership
from annotation.protocols.models import Judgment


def summaries_of(doc: Document) -> list:
    """The document's summaries, each with .rows (its sentences) and judgments attached to both."""
    summaries = list(
        doc.summaries.select_related("topic", "edit__seed__summary")
        .prefetch_related("sentences")
        .order_by("topic__name", "system", "external_id")
    )
    by_summary, by_sentence = judgments_of(doc)
    for summary in summaries:
        summary.summary_judgments = by_summary[summary.pk]
        summary.rows = list(summary.sentences.all())
        for sentence in summary.rows:
            sentence.judgment_rows = by_sentence[sentence.pk]
    return summaries


def judgments_of(doc: Document) -> tuple[dict, dict]:
    """Judgments on the document's summaries (two queries), labelled with annotator pseudonyms."""
    pseudonyms = dict(Membership.objects.filter(project=doc.project_id).values_list("user_id", "pseudonym"))
    rows = (
        Judgment.objects.filter(Q(summary__document=doc) | Q(sentence__summary__document=doc))
        .select_related("assignment__item__campaign")
        .order_by("assignment__item__campaign__slug", "assignment__annotator_id", "dimension", "target")
    )
    by_summary, by_sentence = defaultdict(list), defaultdict(list)
    for judgment in rows:
        judgment.annotator = pseudonyms.get(judgment.assignment.annotator_id, "unknown")
        judgment.shown_value = (
            judgment.value if isinstance(judgment.value, str) else json.dumps(judgment.value, ensure_ascii=False)
        )
        if judgment.sentence_id:
            by_sentence[judgment.sentence_id].append(judgment)
        else:
            by_summary[judgment.summary_id].append(judgment)
    return by_summary, by_sentence
