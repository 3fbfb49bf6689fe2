"""The API's error answers in its OpenAPI description, so that a client (and the schema
fuzzing in tests/api/test_schema_fuzz.py) knows every status an operation may give."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers

DETAIL = inline_serializer("ErrorDetail", fields={"detail": serializers.CharField()})
ERRORS = {
    400: OpenApiResponse(OpenApiTypes.OBJECT, description="The request is invalid: the reasons, by field."),
    403: OpenApiResponse(DETAIL, description="Not signed in (no session, no valid token)."),
    404: OpenApiResponse(DETAIL, description="No such project, object or page, or the role may not see it."),
    429: OpenApiResponse(DETAIL, description="Too many attempts; wait and try again."),
}
# The URL converters' own patterns: a value outside them is not a URL of the API at all.
PATH = [OpenApiParameter("slug", {"type": "string", "pattern": r"^[-a-zA-Z0-9_]+$"}, OpenApiParameter.PATH)]
PATH_WITH_ID = [*PATH, OpenApiParameter("id", {"type": "integer", "minimum": 0}, OpenApiParameter.PATH)]


def responses(ok: dict, *errors: int) -> dict:
    """`ok` (status -> serializer) and the listed error statuses, as extend_schema takes them."""
    return {**ok, **{code: ERRORS[code] for code in errors}}
