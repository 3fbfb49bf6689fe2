from celery import shared_task

from annotation.agreement import services


@shared_task(acks_late=True)
def recompute(snapshot_id: int) -> None:
    services.recompute(snapshot_id=snapshot_id)
