"""A database connection lost mid-request is answered 503 (try again), not 500 (a bug).

PostgreSQL restarting, a failover, or a backend terminated by an administrator surfaces in a
view as OperationalError or InterfaceError. The transaction in progress is rolled back with the
connection, and every write of ours is idempotent or version-checked, so sending the request
again is safe: the answer says so, with Retry-After. The error is still logged in full.
"""

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MESSAGE = (
    "The database is unavailable for a moment, so this request was not completed. Please try again in a few seconds."
)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.error("Database unavailable: %s %s answered 503", request.method, request.path, exc_info=exception)
        if "application/json" in request.headers.get("Accept", "") or request.content_type == "application/json":
            response = JsonResponse({"message": MESSAGE}, status=503)
        else:
            page = f"<!doctype html><title>Try again in a moment</title><h1>Try again in a moment</h1><p>{escape(MESSAGE)}</p>"
            response = HttpResponse(page, status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
