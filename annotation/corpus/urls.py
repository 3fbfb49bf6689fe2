from django.urls import path

from annotation.corpus import views

app_name = "corpus"
urlpatterns = [
    path("p/<slug:slug>/import/", views.import_form, name="import"),
    path("p/<slug:slug>/imports/<int:pk>/", views.import_job, name="import_job"),
    path("p/<slug:slug>/export.jsonl", views.export, name="export"),
    path("p/<slug:slug>/documents/", views.documents, name="documents"),
    path("p/<slug:slug>/documents/<int:pk>/", views.document, name="document"),
]
