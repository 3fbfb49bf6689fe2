"""SummEdits statistics (Table 8) and the per-domain benchmark export."""

from django.urls import path

from annotation.protocols import summedits_views

urlpatterns = [
    path("p/<slug:slug>/campaigns/<int:pk>/summedits/", summedits_views.stats, name="summedits_stats"),
    path(
        "p/<slug:slug>/campaigns/<int:pk>/summedits/benchmark.jsonl",
        summedits_views.benchmark,
        name="summedits_benchmark",
    ),
]
