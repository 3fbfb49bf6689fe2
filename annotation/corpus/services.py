"""Import and export: the one implementation behind the commands, the upload form and the API."""

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation.agreement import services as agreement
from annotation.corpus import exporter, loader
from annotation.corpus.formats import base, jsonl, labels, madisse, ramprasad, summedits, tofueval
from annotation.corpus.models import ImportJob
from annotation.projects.models import Project

FORMATS: dict[str, Callable] = {
    "jsonl": jsonl.parse,
    "tofueval": tofueval.parse,
    "summedits": summedits.parse,
    "madisse": madisse.parse,
    "ramprasad": ramprasad.parse,
    "labels": labels.parse,
}
PROGRESS_TTL = 24 * 3600


def import_data(
    *, project_slug: str, format: str, paths: list[Path], options: dict | None = None, progress=loader._noop
) -> tuple[dict, list[base.Issue]]:
    """Validate every file, then write them all in one transaction (or nothing at all).

    Creates the project if it does not exist. Returns the counts of new rows and the warnings;
    raises base.ImportFailed listing file, line and field of every problem found.
    """
    if format not in FORMATS:
        raise ValidationError(f"Unknown format {format!r}; choose one of {', '.join(FORMATS)}.")
    slug = slugify(project_slug)
    if not slug or slug != project_slug:
        raise ValidationError(f"Project slug {project_slug!r} must be lower-case letters, digits and hyphens.")
    progress("reading", 0, 0)
    parsed = FORMATS[format]([Path(p) for p in paths], options or {})
    project = Project.objects.filter(slug=slug).first() or Project(slug=slug, name=slug.replace("-", " ").title())
    counts = loader.load(project=project, parsed=parsed, progress=progress)
    return counts, parsed.warnings


def export_lines(*, project: Project) -> Iterator[str]:
    """The project as JSONL lines from one consistent snapshot; iterate it to the end.

    PostgreSQL streams straight from a REPEATABLE READ transaction, which blocks no one. On
    SQLite a transaction takes the database's write lock (transaction_mode IMMEDIATE), so the
    snapshot is written to a temporary file first and the lock is held for the seconds that
    takes, not for as long as a slow client downloads.
    """
    if connection.vendor == "postgresql" or connection.in_atomic_block:
        with exporter.snapshot():
            yield from exporter.export_lines(project)
        return
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        with exporter.snapshot():
            spool.writelines(exporter.export_lines(project))
        spool.seek(0)
        yield from spool


def export_filename(project: Project) -> str:
    return f"{project.slug}-{timezone.now():%Y%m%d-%H%M%S}.jsonl"


# -- imports from the browser: stored upload -> Celery task -> progress in the cache --------------
def start_import(*, project: Project, user, format: str, files: list, options: dict | None = None) -> ImportJob:
    """Store uploaded files (never served back) and queue their import on a worker."""
    from annotation.corpus import tasks

    check_uploads(format=format, files=files, options=options or {})
    folder = Path(settings.MEDIA_ROOT) / "imports" / uuid.uuid4().hex
    folder.mkdir(parents=True, exist_ok=True)
    stored = []
    for upload in files:
        target = folder / Path(upload.name).name
        with target.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        stored.append(str(target))
    options = dict(options or {})
    documents_name = options.pop("documents_name", None)
    if documents_name:  # the tofueval documents file travels with the upload, not as data to import
        documents = str(folder / Path(documents_name).name)
        stored.remove(documents)
        options["documents"] = documents
    job = ImportJob.objects.create(project=project, created_by=user, format=format, files=stored, options=options)
    set_progress(job.pk, "queued", 0, 0)
    transaction.on_commit(lambda: tasks.run_import.delay(job.pk))
    return job


def check_uploads(*, format: str, files: list, options: dict) -> None:
    """Refuse, before storing anything, what cannot be imported as sent."""
    if format not in FORMATS:
        raise ValidationError({"format": f"Unknown format {format!r}; choose one of {', '.join(FORMATS)}."})
    if not files:
        raise ValidationError({"files": "Choose at least one file."})
    if options.get("documents_name") and format != "tofueval":
        raise ValidationError({"documents": "A separate documents file is only read by the TofuEval format."})
    names = [Path(f.name).name for f in files]
    if len(set(names)) != len(names):
        raise ValidationError({"files": "Two uploaded files have the same name; rename one of them."})
    for upload in files:
        if upload.size > settings.IMPORT_MAX_BYTES:
            raise ValidationError(
                {"files": f"{upload.name} is {upload.size} bytes; the limit is {settings.IMPORT_MAX_BYTES}."}
            )


def progress_key(job_id: int) -> str:
    return f"attest:import-progress:{job_id}"


def set_progress(job_id: int, phase: str, done: int, total: int) -> None:
    # Kept in the cache, not the job row: the import's own transaction would hide row updates.
    cache.set(progress_key(job_id), {"phase": phase, "done": done, "total": total}, PROGRESS_TTL)


def import_progress(job: ImportJob) -> dict:
    state = cache.get(progress_key(job.pk)) or {"phase": job.status, "done": 0, "total": 0}
    total = state["total"]
    state["percent"] = round(100 * state["done"] / total) if total else (100 if job.is_finished() else 0)
    return state


def run_import_job(*, job_id: int) -> None:
    """The worker's side: run a queued import once; a finished job is left alone.

    A job found running was started by a worker that died without a word (killed, out of
    memory): the database rolled its transaction back and the broker handed the task out
    again. Running it again could kill the next worker too, so it ends failed instead.
    """
    job = ImportJob.objects.select_related("project").get(pk=job_id)
    if job.is_finished():
        return
    if job.status == ImportJob.Status.RUNNING:
        message = "the worker stopped during the import; nothing was written. Start the import again."
        finish(job, ImportJob.Status.FAILED, errors=[{"text": message}])
        return
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)
    try:
        counts, warnings = import_data(
            project_slug=job.project.slug,
            format=job.format,
            paths=[Path(p) for p in job.files],
            options=job.options,
            progress=lambda phase, done, total: set_progress(job.pk, phase, done, total),
        )
    except base.ImportFailed as failure:
        finish(job, ImportJob.Status.FAILED, errors=[i.as_dict() for i in failure.issues])
    except ValidationError as error:
        finish(job, ImportJob.Status.FAILED, errors=[{"text": m} for m in error.messages])
    except BaseException:
        # Whatever else went wrong, the job must not poll forever: say so, then let it propagate
        # so that the worker logs the traceback.
        finish(
            job, ImportJob.Status.FAILED, errors=[{"text": "internal error; nothing was written (see the worker log)"}]
        )
        raise
    else:
        finish(job, ImportJob.Status.DONE, counts=counts, warnings=[w.as_dict() for w in warnings])
        if counts.get("judgments") or counts.get("adjudications"):
            agreement.refresh_project(job.project)


def finish(job: ImportJob, status: str, *, errors=(), warnings=(), counts=None) -> None:
    ImportJob.objects.filter(pk=job.pk).update(
        status=status, errors=list(errors), warnings=list(warnings), counts=counts or {}, finished_at=timezone.now()
    )
    set_progress(job.pk, status, 1, 1)
    if job.files:
        shutil.rmtree(Path(job.files[0]).parent, ignore_errors=True)
