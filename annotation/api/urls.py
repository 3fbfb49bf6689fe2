from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.accounts.middleware import allow_inline_styles
from annotation.api import views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", allow_inline_styles(SpectacularSwaggerSplitView.as_view(url_name="api-schema")), name="api-docs"),
    path("token/", views.ObtainToken.as_view(), name="api-token"),
    path("projects/", views.ProjectList.as_view(), name="api-projects"),
    path("projects/<slug:slug>/", views.ProjectDetail.as_view(), name="api-project"),
    path("projects/<slug:slug>/members/", views.ProjectMembers.as_view(), name="api-members"),
    path("projects/<slug:slug>/documents/", views.DocumentList.as_view(), name="api-documents"),
    path("projects/<slug:slug>/summaries/", views.SummaryList.as_view(), name="api-summaries"),
    path("projects/<slug:slug>/export.jsonl", views.Export.as_view(), name="api-export"),
    path("projects/<slug:slug>/imports/", views.ImportCreate.as_view(), name="api-import"),
    path("projects/<slug:slug>/imports/<int:pk>/", views.ImportDetail.as_view(), name="api-import-detail"),
    path("projects/<slug:slug>/llm/jobs/", views.LlmJobCreate.as_view(), name="api-llm-jobs"),
    path("projects/<slug:slug>/llm/jobs/<int:pk>/", views.LlmJobDetail.as_view(), name="api-llm-job"),
    path("projects/<slug:slug>/campaigns/<int:pk>/agreement/", views.CampaignAgreement.as_view(), name="api-agreement"),
]
