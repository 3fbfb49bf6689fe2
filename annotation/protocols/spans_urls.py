"""Span campaign statistics (Ramprasad et al. 2024)."""

from django.urls import path

from annotation.protocols import spans_views

urlpatterns = [
    path("p/<slug:slug>/campaigns/<int:pk>/spans/", spans_views.stats, name="spans_stats"),
]
