from django.db import models

from annotation.protocols.models import Campaign


class AgreementSnapshot(models.Model):
    """The dashboard's figures for one campaign and set of filters, as of `computed_at`.

    `version` is the campaign's labels version they were computed from; when the labels change,
    the dashboard shows the old figures marked stale while a worker recomputes.
    """

    class Status(models.TextChoices):
        EMPTY = "empty", "Not computed yet"
        COMPUTING = "computing", "Computing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="agreement_snapshots")
    filters_key = models.CharField(max_length=32)
    filters = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.EMPTY)
    version = models.CharField(max_length=200, blank=True)
    results = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "filters_key"], name="snapshot_per_filters"),
        ]

    def __str__(self) -> str:
        return f"agreement of {self.campaign} ({self.status})"

    def percent_done(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0
