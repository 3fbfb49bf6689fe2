from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "annotation.accounts"
    label = "accounts"
