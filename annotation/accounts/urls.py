from django.urls import path

from annotation.accounts import views

app_name = "accounts"
urlpatterns = [
    path("invitations/<str:token>/", views.accept, name="accept"),
]
