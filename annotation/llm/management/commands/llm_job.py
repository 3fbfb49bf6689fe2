import json
import time
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotation.llm import judging, services
from annotation.llm.models import Endpoint, Job, Prompt
from annotation.projects.models import Project


class Command(BaseCommand):
    help = "Start an LLM job (the same service as the job form); with --wait, follow it to the end."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--kind", required=True, choices=[k for k, _ in Job.Kind.choices])
        parser.add_argument("--endpoint", required=True, help="endpoint name")
        parser.add_argument("--prompt", help="prompt slug[:version] (default: the kind's newest default)")
        parser.add_argument("--campaign", type=int, help="judge: only this campaign's summaries")
        parser.add_argument("--n", type=int, help="topics per document")
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--budget", type=Decimal, help="USD; the job stops when its cost reaches this")
        parser.add_argument("--wait", action="store_true", help="print progress until the job ends, then JSON")
        parser.add_argument("--timeout", type=float, default=0, help="with --wait: give up after this many seconds")

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        endpoint = Endpoint.objects.filter(name=opts["endpoint"]).first()
        if project is None or endpoint is None:
            raise CommandError(
                f"no project {opts['project']!r}" if project is None else f"no endpoint {opts['endpoint']!r}"
            )
        prompt = None
        if opts.get("prompt"):
            slug, _, version = opts["prompt"].partition(":")
            prompts = Prompt.objects.filter(slug=slug).order_by("-version")
            prompt = prompts.filter(version=int(version)).first() if version.isdigit() else prompts.first()
            if prompt is None:
                raise CommandError(f"no prompt {opts['prompt']!r}")
        params = {k: opts[k] for k in ("campaign", "n", "temperature") if opts.get(k) is not None}
        try:
            job = services.create_job(
                project=project,
                kind=opts["kind"],
                endpoint=endpoint,
                prompt=prompt,
                params=params,
                budget_usd=opts.get("budget"),
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        self.stderr.write(f"{job} started: {job.units.count()} units.")
        if not opts["wait"]:
            self.stdout.write(json.dumps({"job": job.pk, "status": job.status}))
            return
        deadline = time.monotonic() + opts["timeout"] if opts["timeout"] else None
        last = None
        while True:
            job.refresh_from_db()
            progress = services.progress(job)
            line = f"{progress['done']} done, {progress['failed']} failed, {progress['remaining']} remaining"
            if line != last:
                self.stderr.write(line)
                last = line
            if not job.is_open() or (deadline and time.monotonic() > deadline):
                break
            time.sleep(1)
        out = summary(job, progress)
        if job.kind == Job.Kind.JUDGE:
            out["scores"] = judging.judge_scores(job)
        self.stdout.write(json.dumps(out))
        if job.is_open():
            raise CommandError("gave up waiting; the job goes on")


def summary(job, progress) -> dict:
    return {
        "job": job.pk,
        "kind": job.kind,
        "status": job.status,
        "total": progress["total"],
        "done": progress["done"],
        "failed": progress["failed"],
        "cancelled": progress["cancelled"],
        "input_tokens": progress["input_tokens"],
        "output_tokens": progress["output_tokens"],
        "cost_usd": float(progress["cost"]),
    }
