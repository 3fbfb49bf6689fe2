from django.apps import AppConfig


class ProtocolsConfig(AppConfig):
    name = "annotation.protocols"
    label = "protocols"
