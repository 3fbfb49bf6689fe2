"""Celery tasks of the LLM layer: thin wrappers over llm.services, retrying only on Busy (the
endpoint's limits) and on providers.TransientError (429, 5xx, timeouts), with backoff and jitter.

Late acknowledgement with reject-on-worker-lost: a worker killed mid-unit leaves the message to
be redelivered, and `services.finish` writes a unit once however often it runs."""

import random

from celery import shared_task

from annotation.llm import providers, services


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None, ignore_result=True)
def run_unit(self, unit_id: int) -> None:
    try:
        services.run_unit(unit_id=unit_id)
    except services.Busy as busy:
        raise self.retry(countdown=busy.wait + random.uniform(0, 0.25)) from None
    except providers.TransientError as error:
        delay = services.transient_failure(unit_id=unit_id, error=error)
        if delay is not None:
            raise self.retry(countdown=delay) from None


@shared_task(ignore_result=True)
def reconcile() -> int:
    return services.reconcile()
