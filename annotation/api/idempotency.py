"""`Idempotency-Key` for the API's POSTs that start work (imports, LLM jobs).

A client that cannot tell whether its POST arrived (a timeout, a dropped connection) sends it
again with the same key and gets the first answer, with `Idempotent-Replayed: true`, instead of
a second job. Twins sent at once serialise on the key's unique row: the second waits for the
first to commit, then replays it. Only successes are kept: after a 4xx the client may fix the
request and send it again under the same key. The same key on another request (another path or
other fields) is refused with 422, never replayed as if it were the same.
"""

import functools
import hashlib
import json
import re

from django.db import IntegrityError, transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.response import Response

from annotation.api.models import IdempotencyKey

HEADER = "Idempotency-Key"
KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
PARAMETER = OpenApiParameter(
    HEADER,
    {"type": "string", "pattern": r"^[A-Za-z0-9_-]{1,64}$"},
    OpenApiParameter.HEADER,
    description="Optional. Sending the same key again replays the first answer instead of starting the work twice.",
)
MISMATCH = OpenApiResponse(OpenApiTypes.OBJECT, description="This Idempotency-Key was used for another request.")
RACE = OpenApiResponse(OpenApiTypes.OBJECT, description="A twin request with this key failed meanwhile; send again.")
ANSWERS = {409: RACE, 422: MISMATCH}


def fingerprint(request) -> str:
    """The request's path and fields (uploaded files by name, size and content hash)."""
    fields = {}
    for name in sorted(request.data.keys()):
        values = request.data.getlist(name) if hasattr(request.data, "getlist") else [request.data[name]]
        fields[name] = [describe(value) for value in values]
    raw = json.dumps({"path": request.path, "fields": fields}, sort_keys=True, default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def describe(value):
    if hasattr(value, "chunks"):  # an uploaded file
        digest = hashlib.sha256()
        for chunk in value.chunks():
            digest.update(chunk)
        value.seek(0)
        return {"file": value.name, "size": value.size, "sha256": digest.hexdigest()}
    return value


def replay(record: IdempotencyKey, print_: str) -> Response:
    if record.fingerprint != print_:
        message = f"This {HEADER} was used for another request; use a new key for a new request."
        return Response({HEADER: [message]}, status=422)
    return Response(record.body, status=record.status, headers={"Idempotent-Replayed": "true"})


def first_sending(user, key: str, path: str) -> bool:
    """For an HTML form sent with a hidden one-time key, inside the transaction that does its work:
    True for the first sending; False for a resend or a double click's twin (which waits here
    until the first commits). Keys that are not well-formed are not remembered (True)."""
    if not KEY.fullmatch(key or ""):
        return True
    try:
        with transaction.atomic():
            IdempotencyKey.objects.create(user=user, key=f"form-{key}"[:64], path=path, fingerprint="", status=303)
    except IntegrityError:
        return False
    return True


def idempotent(post):
    """Wrap an APIView's post(): with the header, the work and the key's row commit together."""

    @functools.wraps(post)
    def wrapper(view, request, *args, **kwargs):
        key = request.headers.get(HEADER)
        if key is None or not request.user.is_authenticated:
            return post(view, request, *args, **kwargs)
        if not KEY.fullmatch(key):
            return Response({HEADER: ["1 to 64 letters, digits, '-' or '_'."]}, status=400)
        print_ = fingerprint(request)
        done = IdempotencyKey.objects.filter(user=request.user, key=key).first()
        if done is not None:
            return replay(done, print_)
        with transaction.atomic():
            try:
                with transaction.atomic():  # a savepoint: only the key's insert is caught below
                    # the unique row comes first: a twin's insert waits here until this one commits
                    record = IdempotencyKey.objects.create(
                        user=request.user, key=key, path=request.path, fingerprint=print_
                    )
            except IntegrityError:
                record = None
            if record is None:
                done = IdempotencyKey.objects.filter(user=request.user, key=key).first()
                if done is None:  # the twin failed and kept nothing: send this one again
                    return Response({HEADER: ["A request with this key was just refused; send it again."]}, status=409)
                return replay(done, print_)
            response = post(view, request, *args, **kwargs)
            if not 200 <= response.status_code < 300:
                transaction.set_rollback(True)  # keep nothing: the key may be used again
                return response
            record.status, record.body = response.status_code, response.data
            record.save(update_fields=["status", "body"])
            return response

    return wrapper
