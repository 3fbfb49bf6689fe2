from django.urls import path

from annotation.agreement import views

app_name = "agreement"
urlpatterns = [
    path("p/<slug:slug>/campaigns/<int:pk>/agreement/", views.dashboard, name="dashboard"),
    path("p/<slug:slug>/campaigns/<int:pk>/agreement/<str:kind>.png", views.chart, name="chart"),
]
