from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "annotation.api"
    label = "api"
