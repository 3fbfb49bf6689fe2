from django.urls import include, path

from annotation.protocols import views

app_name = "protocols"
urlpatterns = [
    path("p/<slug:slug>/assignments/<int:pk>/", views.task1, name="task1"),
    path("p/<slug:slug>/assignments/<int:pk>/draft/", views.task1_draft, name="task1_draft"),
    path("p/<slug:slug>/assignments/<int:pk>/submit/", views.task1_submit, name="task1_submit"),
    path("p/<slug:slug>/campaigns/<int:pk>/next/", views.next_assignment, name="next"),
    path("p/<slug:slug>/campaigns/<int:pk>/results/", views.campaign_results, name="results"),
    path("p/<slug:slug>/campaigns/new/tofueval-task1/", views.new_task1_campaign, name="new_task1"),
    path("p/<slug:slug>/campaigns/<int:pk>/progress/", views.campaign_progress, name="progress"),
    path("", include("annotation.protocols.review_urls")),
]
