"""Celery app. Redis is the broker when REDIS_URL is set; otherwise a filesystem broker
under var/celery needs no server, and `make run` starts a worker beside the web server."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")

app = Celery("annotation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
