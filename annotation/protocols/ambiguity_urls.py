from django.urls import path

from annotation.protocols import ambiguity_views

urlpatterns = [
    path(
        "p/<slug:slug>/campaigns/<int:pk>/adjudicate/",
        ambiguity_views.adjudicate,
        name="ambiguity_adjudicate",
    ),
    path(
        "p/<slug:slug>/campaigns/<int:pk>/ambiguity/",
        ambiguity_views.statistics,
        name="ambiguity_stats",
    ),
]
