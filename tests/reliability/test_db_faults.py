"""PostgreSQL connections terminated under web load: annotators autosave and submit on their own
threads (and connections) while another thread terminates every backend of the test database,
over and over. What must hold: each answer is a success, a 503 to retry, or (only while a write
is retried after a 503) the version check of that write; never a 500; a submitted assignment
always has all its judgments; and retried submissions end with one set of labels.

A submit whose draft save committed before its connection dropped finds, when retried, its own
draft stored: that is no conflict, and the submit goes through (a 409 would only come from a
different draft; the drill reloads the page then).

PostgreSQL only: pg_terminate_backend, and only on this test database's own backends."""

import random
import re
import threading
import time
from collections import Counter

import pytest
from django.conf import settings
from django.db import close_old_connections, connection
from django.test import Client

from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import services
from annotation.protocols.models import Assignment, Judgment, JudgmentRevision
from tests.reliability import test_double_submit as double

ANNOTATORS = 3
SAVES = 12  # autosaves per annotator before the submit
LOAD_SECONDS = 60  # at most: the drill stops earlier once every annotator has submitted
MIDDLEWARE = "annotation.projects.middleware.DatabaseUnavailableMiddleware"
task = double.task  # one TofuEval task 1 item: two summaries of two sentences
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="terminates PostgreSQL backends"),
]


@pytest.fixture
def assignments(task, annotator, make_user):
    """The item assigned to several annotators: one thread each, with a logged-in client."""
    mine = [task]
    for n in range(2, ANNOTATORS + 1):
        user = make_user(f"ann{n}")
        projects.add_member(project=task.item.campaign.project, user=user, role=Role.ANNOTATOR)
        mine.append(services.assign(item=task.item, annotator=user, seed=n))
    return mine


class Terminator(threading.Thread):
    """Terminates the test database's other backends every few tens of milliseconds, and checks
    meanwhile that no submitted assignment is ever seen without all its judgments."""

    def __init__(self, spare_pid: int, expected: int):
        super().__init__(daemon=True)
        self.spare_pid, self.expected = spare_pid, expected
        self.stop, self.kills, self.partial = threading.Event(), 0, []

    def run(self):
        try:
            while not self.stop.is_set():
                time.sleep(random.uniform(0.01, 0.08))
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid NOT IN (pg_backend_pid(), %s)",
                        [self.spare_pid],
                    )
                    self.kills += cursor.fetchone()[0]
                for assignment in Assignment.objects.filter(status=Assignment.Status.SUBMITTED):
                    if assignment.judgments.count() != self.expected:
                        self.partial.append((assignment.pk, assignment.judgments.count()))
        finally:
            connection.close()


def server_closes_broken_connections() -> None:
    """What a WSGI server does at the end of every request (request_finished), and the test Client
    skips on purpose: close this thread's connection if it is broken, so the next request opens a new one."""
    close_old_connections()


def draft_version_on_screen(client, url: str, outcomes: list) -> int | None:
    """What a reload shows (None while the database is still away)."""
    response = client.get(url)
    server_closes_broken_connections()
    outcomes.append(("screen", response.status_code, True, response))
    match = re.search(r'name="draft_version" value="(\d+)"', response.content.decode())
    return int(match.group(1)) if response.status_code == 200 and match else None


def session_of(assignment) -> dict:
    """Everything an annotator's thread needs, read before the connections start to drop."""
    client = Client(raise_request_exception=False)
    client.force_login(assignment.annotator)
    summary = assignment.item.summaries.first()
    return {
        "client": client,
        "url": f"/p/{assignment.item.campaign.project.slug}/assignments/{assignment.pk}/",
        "drafts": [{"topic_category": "main", f"r-{summary.pk}": str(1 + n % 5)} for n in range(SAVES)],
        "form": double.complete_form(assignment) | {"client_token": f"token-{assignment.pk}"},
    }


def annotate(session: dict, outcomes: list) -> None:
    """One annotator's session as the browser drives it: autosaves (a 503 is retried; a 409 whose
    draft is the one sent means the answer lost to the 503 had saved it), then a submit, retried
    after a 503, and after a 409 (its draft save had committed) from a reloaded page."""
    client, url, form = session["client"], session["url"], dict(session["form"])
    version, after_503 = 0, False

    def send(kind, *args, **kwargs):
        nonlocal after_503
        response = client.post(url + kind + "/", *args, **kwargs)
        server_closes_broken_connections()
        outcomes.append((kind, response.status_code, after_503, response))
        if response.status_code in (200, 302, 503):
            after_503 = response.status_code == 503  # until this write goes through
        return response

    try:
        for draft in session["drafts"]:
            body = {"version": version, "draft": draft, "active_seconds_delta": 1}
            while (response := send("draft", body, content_type="application/json")).status_code == 503:
                time.sleep(0.05)
            if response.status_code not in (200, 409) or response.json().get("draft", draft) != draft:
                return  # not what a retry can get: the checks below report it
            version = response.json()["version"]
        form["draft_version"] = str(version)
        while (response := send("submit", form)).status_code in (503, 409):
            if response.status_code == 409:
                form["draft_version"] = str(draft_version_on_screen(client, url, outcomes) or form["draft_version"])
            time.sleep(0.05)
    finally:
        connection.close()  # this thread's own connection, or the test database cannot be dropped


def test_terminated_connections_under_load_answer_503_never_500_and_lose_nothing(assignments):
    expected = double.expected_judgments(assignments[0])
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        spare = cursor.fetchone()[0]  # the test's own connection (it flushes the database at the end)
    outcomes: list = []
    terminator = Terminator(spare, expected)
    sessions = [session_of(a) for a in assignments]
    assert MIDDLEWARE in settings.MIDDLEWARE  # installed in settings, not by this test
    threads = [threading.Thread(target=annotate, args=(s, outcomes)) for s in sessions]
    terminator.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=LOAD_SECONDS)
    terminator.stop.set()
    terminator.join(timeout=10)
    assert not any(t.is_alive() for t in threads), "an annotator's requests hung"

    statuses = Counter((kind, status) for kind, status, _, _ in outcomes)
    print(f"{terminator.kills} backends terminated; answers {dict(statuses)}")
    assert not [o for o in outcomes if o[1] == 500], statuses
    unexpected = [
        (k, s) for k, s, after_503, _ in outcomes if s not in (200, 302, 503) and not (s == 409 and after_503)
    ]
    assert not unexpected, statuses
    unavailable = [r for _, s, _, r in outcomes if s == 503]
    assert unavailable, f"no request met a terminated connection ({terminator.kills} kills): the drill did not bite"
    assert all(r["Retry-After"] == "5" and b"try again" in r.content for r in unavailable)
    assert terminator.partial == [], "a submitted assignment was seen without all its judgments"

    for assignment in assignments:
        assignment.refresh_from_db()
        assert (assignment.status, assignment.client_token) == ("submitted", f"token-{assignment.pk}")
        assert Judgment.objects.filter(assignment=assignment).count() == expected
    assert not JudgmentRevision.objects.exists()  # each submission was recorded once
