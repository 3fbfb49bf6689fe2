from django.urls import path

from annotation.llm import views

app_name = "llm"
urlpatterns = [
    path("llm/endpoints/", views.endpoints, name="endpoints"),
    path("llm/endpoints/<int:pk>/", views.endpoint_edit, name="endpoint"),
    path("llm/prompts/", views.prompt_list, name="prompts"),
    path("llm/prompts/<slug:slug>/", views.prompt_detail, name="prompt"),
    path("p/<slug:slug>/llm/jobs/", views.job_list, name="jobs"),
    path("p/<slug:slug>/llm/jobs/<int:pk>/", views.job_detail, name="job"),
    path("p/<slug:slug>/llm/jobs/<int:pk>/units/<int:unit_pk>/", views.unit_detail, name="unit"),
    path("p/<slug:slug>/llm/jobs/<int:pk>/cancel/", views.job_cancel, name="job_cancel"),
    path("p/<slug:slug>/llm/jobs/<int:pk>/resume/", views.job_resume, name="job_resume"),
]
