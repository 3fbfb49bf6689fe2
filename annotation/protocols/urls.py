from django.urls import include, path

from annotation.protocols import views

app_name = "protocols"
urlpatterns = [
    # First: its "campaigns/new/explanation-rating/" would otherwise match "campaigns/new/<task>/".
    path("", include("annotation.protocols.explanation_urls")),
    path("", include("annotation.protocols.summedits_urls")),
    path("", include("annotation.protocols.spans_urls")),
    path("", include("annotation.protocols.ambiguity_urls")),
    path("p/<slug:slug>/assignments/<int:pk>/", views.assignment_screen, name="assignment"),
    path("p/<slug:slug>/assignments/<int:pk>/draft/", views.assignment_draft, name="assignment_draft"),
    path("p/<slug:slug>/assignments/<int:pk>/submit/", views.assignment_submit, name="assignment_submit"),
    path("p/<slug:slug>/campaigns/<int:pk>/next/", views.next_assignment, name="next"),
    path("p/<slug:slug>/campaigns/<int:pk>/results/", views.campaign_results, name="results"),
    path("p/<slug:slug>/campaigns/new/summedits/", views.new_summedits_campaign, name="new_summedits"),
    path("p/<slug:slug>/campaigns/new/<slug:task>/", views.new_campaign, name="new_campaign"),
    path("p/<slug:slug>/campaigns/<int:pk>/progress/", views.campaign_progress, name="progress"),
    path("p/<slug:slug>/campaigns/<int:pk>/warm-up/", views.summedits_warmup, name="summedits_warmup"),
    path("p/<slug:slug>/campaigns/<int:pk>/generate/", views.summedits_generate, name="summedits_generate"),
    path("p/<slug:slug>/campaigns/<int:pk>/edit-types/", views.summedits_edit_types, name="summedits_edit_types"),
    path("", include("annotation.protocols.review_urls")),
]
