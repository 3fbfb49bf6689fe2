"""Rating LLM judges' explanations (SummEdits App. B, TofuEval App. H)."""

from django.urls import path

from annotation.protocols import explanation_views

urlpatterns = [
    path(
        "p/<slug:slug>/campaigns/new/explanation-rating/",
        explanation_views.new_campaign,
        name="explanations_new",
    ),
    path("p/<slug:slug>/explanations/<int:pk>/", explanation_views.rate, name="explanations_rate"),
    path(
        "p/<slug:slug>/campaigns/<int:pk>/explanations/next/",
        explanation_views.next_assignment,
        name="explanations_next",
    ),
    path(
        "p/<slug:slug>/campaigns/<int:pk>/explanation-shares/",
        explanation_views.shares,
        name="explanations_shares",
    ),
]
