"""Operations on campaigns that span models."""

import random

from django.db import transaction
from django.utils import timezone

from annotation.protocols.models import Assignment, Campaign, Item


@transaction.atomic
def assign(*, item: Item, annotator, stage: str = "annotate", seed: int | None = None) -> Assignment:
    """Give an item to an annotator (once per stage), with its summaries in a seeded, recorded
    shuffled order so that no summarizer is always seen first."""
    existing = Assignment.objects.filter(item=item, annotator=annotator, stage=stage).first()
    if existing:
        return existing
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed
    order = sorted(item.summaries.values_list("pk", flat=True))
    random.Random(seed).shuffle(order)
    return Assignment.objects.create(
        item=item, annotator=annotator, stage=stage, shuffle_seed=seed, summary_order=order
    )


def labels_changed(*, campaign_ids) -> None:
    """Every service that writes judgments or adjudications calls this in the same transaction:
    it is what tells agreement snapshots that they are stale."""
    Campaign.objects.filter(pk__in=list(campaign_ids)).update(labels_changed_at=timezone.now())
