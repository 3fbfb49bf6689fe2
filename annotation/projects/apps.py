from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "annotation.projects"
    label = "projects"
