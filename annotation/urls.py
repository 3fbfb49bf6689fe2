from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("", include("annotation.accounts.urls")),
    path("", include("annotation.projects.urls")),
    path("", include("annotation.corpus.urls")),
    path("api/", include("annotation.api.urls")),
]
