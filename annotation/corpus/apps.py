from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "annotation.corpus"
    label = "corpus"
