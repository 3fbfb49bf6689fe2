from django.apps import AppConfig


class AgreementConfig(AppConfig):
    name = "annotation.agreement"
    label = "agreement"
