"""Expert review and error typing of TofuEval task 1 labels (App. F.4, G)."""

from django.urls import path

from annotation.protocols import review_views

UNIT = "p/<slug:slug>/campaigns/<int:pk>/review/items/<int:item>/sentences/<int:sentence>/"

urlpatterns = [
    path("p/<slug:slug>/campaigns/<int:pk>/review/", review_views.queue, name="review_queue"),
    path("p/<slug:slug>/campaigns/<int:pk>/review/next/<slug:name>/", review_views.next_unit, name="review_next"),
    path(UNIT, review_views.unit, name="review_unit"),
    path(UNIT + "decide/", review_views.decide, name="review_decide"),
    path(UNIT + "check/", review_views.check, name="review_check"),
    path(UNIT + "types/", review_views.types, name="review_types"),
]
