from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models


class IdempotencyKey(models.Model):
    """A POST sent with an `Idempotency-Key` header, and the answer it got: the same key sent
    again by the same user replays that answer instead of doing the work twice."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)
    path = models.CharField(max_length=500)
    fingerprint = models.CharField(max_length=64)  # sha256 of the request's fields
    status = models.PositiveSmallIntegerField(default=0)
    body = models.JSONField(default=dict, encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique_per_user")]

    def __str__(self):
        return f"{self.key} {self.path} -> {self.status}"
