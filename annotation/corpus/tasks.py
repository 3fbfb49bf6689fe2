from celery import shared_task

from annotation.corpus import services


# reject_on_worker_lost: a worker killed mid-import hands the task back, and its second run
# marks the job failed (see run_import_job) instead of leaving it "running" for ever.
@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_import(job_id: int) -> None:
    services.run_import_job(job_id=job_id)
