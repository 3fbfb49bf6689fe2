"""SummEdits in the browser: keystrokes and server round-trip time per labelled edit.

Starts `manage.py runserver` on a fresh database (SQLite under a temporary ATTEST_VAR_DIR, or
DATABASE_URL), imports the SummEdits sample, and drives Debian's Chromium through the real
screen: verify the seed from the keyboard, then label every edit with one key each, waiting for
each autosave's answer (as an annotator at a normal pace would never outrun it), then submit.

    .venv/bin/python benchmarks/summedits_labelling.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/attest_bench .venv/bin/python benchmarks/summedits_labelling.py
"""

import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("ATTEST_VAR_DIR", tempfile.mkdtemp(prefix="attest-bench-"))
os.environ.setdefault("CELERY_TASK_ALWAYS_EAGER", "1")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402

from annotation.corpus import services as corpus  # noqa: E402
from annotation.corpus.models import SeedSummary  # noqa: E402
from annotation.projects import services as projects  # noqa: E402
from annotation.projects.models import Project, Role  # noqa: E402
from annotation.protocols import summedits  # noqa: E402
from annotation.protocols.models import Assignment  # noqa: E402

DATA = ROOT / "annotation" / "corpus" / "demo_data" / "summedits_sample"
SLUG = f"se-bench-{int(time.time())}"  # a new project per run: annotated projects are never deleted
PASSWORD = secrets.token_urlsafe(16)  # a throwaway user on a throwaway database


def world() -> Assignment:
    call_command("migrate", verbosity=0)
    corpus.import_data(project_slug=SLUG, format="summedits", paths=sorted(DATA.glob("*.json")))
    project = Project.objects.get(slug=SLUG)
    user, _ = get_user_model().objects.get_or_create(username="bench-annotator")
    user.set_password(PASSWORD)
    user.save()
    projects.add_member(project=project, user=user, role=Role.ANNOTATOR)
    campaign = summedits.create_campaign(
        project=project,
        name="bench",
        slug="bench",
        domain="sales_call",
        annotators=[user],
        double_share=0,
        generation="none",
    )
    seed = SeedSummary.objects.get(summary__project=project, summary__external_id="sales_call_0_og")
    return Assignment.objects.get(item__campaign=campaign, item__summaries=seed.summary)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    from playwright.sync_api import sync_playwright

    assignment = world()
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
            )
            page = browser.new_page()
            page.goto(f"{base}/accounts/login/")
            page.fill("input[name=login]", "bench-annotator")
            page.fill("input[name=password]", PASSWORD)
            page.keyboard.press("Enter")
            page.wait_for_url(f"{base}/")
            page.goto(f"{base}/p/{SLUG}/assignments/{assignment.pk}/")
            keys = 0
            for key in ("ArrowRight", "Tab", "Space", "Control+Enter"):  # no flaws; consistent; verify
                page.keyboard.press(key)
                keys += 1
            page.wait_for_selector("fieldset.edit")
            edits = page.locator("fieldset.edit").count()
            draft_url = f"/p/{SLUG}/assignments/{assignment.pk}/draft/"
            round_trips = []
            for n in range(edits):
                started = time.monotonic()  # key press -> label saved on the server and answered
                with page.expect_response(lambda r: r.url.endswith(draft_url) and r.status == 200):
                    page.keyboard.press("cib"[n % 3])
                    keys += 1
                round_trips.append((time.monotonic() - started) * 1000)
            here = page.url
            started = time.monotonic()
            page.keyboard.press("Control+Enter")
            keys += 1
            page.wait_for_url(lambda url: url != here)  # the next seed
            submit_ms = (time.monotonic() - started) * 1000
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    assignment.refresh_from_db()
    result = {
        "database": "postgresql" if "postgres" in os.environ.get("DATABASE_URL", "") else "sqlite",
        "edits": edits,
        "keystrokes": keys,
        "keystrokes_per_edit": round(keys / edits, 2),
        "autosave_ms_median": round(statistics.median(round_trips), 1),
        "autosave_ms_p95": round(sorted(round_trips)[int(0.95 * (len(round_trips) - 1))], 1),
        "submit_and_next_page_ms": round(submit_ms, 1),
        "status": assignment.status,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
