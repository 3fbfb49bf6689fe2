from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import JsonResponse
from django.urls import include, path
from django.views import defaults

from annotation.projects import views as project_views


def healthz(request):
    """For load balancers and compose: 200 when the database answers, 503 when it does not."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # noqa: BLE001 - any database failure means "not healthy"
        return JsonResponse({"database": "down"}, status=503)
    return JsonResponse({"database": "ok"})


def not_found(request, exception):
    """The API answers in JSON, also for a path it does not have; pages get the HTML 404."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


handler404 = not_found

# The admin signs in through allauth's form, so its rate limits cover the admin too.
admin.site.login = login_required(admin.site.login)

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("", include("annotation.accounts.urls")),
    path("", project_views.home, name="home"),
    path("", include("annotation.projects.urls")),
    path("", include("annotation.corpus.urls")),
    path("", include("annotation.agreement.urls")),
    path("", include("annotation.protocols.urls")),
    path("", include("annotation.llm.urls")),
    path("api/", include("annotation.api.urls")),
]
