from django.urls import path

from annotation.projects import views

app_name = "projects"
urlpatterns = [
    path("p/<slug:slug>/", views.detail, name="detail"),
    path("p/<slug:slug>/invite/", views.invite, name="invite"),
]
