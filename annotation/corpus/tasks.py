from celery import shared_task

from annotation.corpus import services


@shared_task(acks_late=True)
def run_import(job_id: int) -> None:
    services.run_import_job(job_id=job_id)
