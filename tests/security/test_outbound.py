"""The server never fetches a URL that comes from an annotator, an import file or a model's output:
the only outbound connections are to an LLM endpoint's base URL, which leads, staff and the command
line set (tests/security/test_endpoints.py).

A recording HTTP server stands for anything such a URL could point at; every socket connection
and name lookup of the process is watched besides."""

import json
import socket
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation.corpus import services as corpus
from annotation.corpus.formats.base import ImportFailed
from annotation.corpus.models import Document, Summary, Topic
from annotation.llm import services as llm
from annotation.llm.models import Endpoint, Job, Unit
from annotation.protocols import services as protocol_services
from tests.corpus.test_jsonl import records, write
from tests.llm import fake_openai
from tests.protocols.conftest import make_item, sentences
from tests.security import test_matrix

_fast_passwords = test_matrix._fast_passwords  # an autouse fixture of this module too

pytestmark = pytest.mark.django_db


class Recorder(BaseHTTPRequestHandler):
    seen: list

    def do_GET(self):  # noqa: N802 - the name http.server calls
        self.seen.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"fetched")

    do_POST = do_HEAD = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def bait():
    """A server that must never be asked for anything; its URLs go into the data."""
    handler = type("Handler", (Recorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    yield {"base": base, "seen": handler.seen, "port": server.server_port}
    server.shutdown()


@contextmanager
def watched(monkeypatch):
    """Every connect() and name lookup made meanwhile, by any thread of the process."""
    connects, lookups = [], []
    real_connect, real_lookup = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        connects.append(address)
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        lookups.append(host)
        return real_lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield connects, lookups


def urls(bait) -> list[str]:
    return [
        f"{bait['base']}/plain",
        f"![image]({bait['base']}/markdown-image)",
        f'<img src="{bait["base"]}/html-image">',
        f"<{bait['base']}/autolink>",
        "http://evil.example/exfiltrate",
        "https://169.254.169.254/latest/meta-data/",
        f"file:///etc/passwd {bait['base']}/after-file",
    ]


def assert_nothing_fetched(bait, connects, lookups, allowed_ports=()):
    assert bait["seen"] == [], f"the bait server was asked for {bait['seen']}"
    foreign = [a for a in connects if isinstance(a, tuple) and a[1] not in (*allowed_ports, 5432, 6379)]
    assert foreign == [], f"unexpected connections: {foreign}"
    assert not [h for h in lookups if h and "evil.example" in str(h) or str(h).startswith("169.254")], lookups


def test_an_import_full_of_urls_fetches_nothing(tmp_path, bait, monkeypatch, project, lead, client):
    rows = records()
    links = " ".join(urls(bait))
    rows[1]["turns"] = [{"speaker": bait["base"], "text": links}]
    rows[1]["meta"] = {"source_url": f"{bait['base']}/meta", "image": f"{bait['base']}/meta.png"}
    rows[3]["system"] = f"{bait['base']}/system"
    rows[3]["judgments"][0]["explanation"] = links
    path = write(tmp_path, rows, name="data.jsonl")
    with watched(monkeypatch) as (connects, lookups):
        corpus.import_data(project_slug=project.slug, format="jsonl", paths=[path])
        with pytest.raises((ImportFailed, ValidationError, OSError)):  # a URL where a file is expected
            corpus.import_data(
                project_slug=project.slug,
                format="tofueval",
                paths=[tmp_path],
                options={"documents": f"{bait['base']}/documents.jsonl"},
            )
        client.force_login(lead)
        document = Document.objects.get(project=project)
        for url in [f"/p/{project.slug}/documents/", f"/p/{project.slug}/documents/{document.pk}/"]:
            assert client.get(url).status_code == 200
        b"".join(client.get(f"/p/{project.slug}/export.jsonl").streaming_content)
    assert bait["base"] in Document.objects.get(project=project).text  # the URLs are kept as text
    assert_nothing_fetched(bait, connects, lookups)


def test_an_import_job_named_by_url_fetches_nothing(bait, monkeypatch, project, lead, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    body = "".join(json.dumps(r) + "\n" for r in [{"type": "document", "id": "u", "text": " ".join(urls(bait))}])
    upload = SimpleUploadedFile("http:__127.0.0.1_evil.jsonl", body.encode())
    with watched(monkeypatch) as (connects, lookups):
        job = corpus.start_import(project=project, user=lead, format="jsonl", files=[upload])
        client.force_login(lead)
        assert client.get(reverse("corpus:import_job", args=[project.slug, job.pk])).status_code == 200
    assert_nothing_fetched(bait, connects, lookups)


def test_llm_output_full_of_urls_fetches_nothing(
    bait, monkeypatch, project, lead, client, django_capture_on_commit_callbacks
):
    links = "\n".join(urls(bait))
    document = Document.objects.create(
        project=project, external_id="d1", kind="dialogue", text=f"Ana: see {bait['base']}/doc for the budget."
    )
    Topic.objects.create(document=document, name="the budget")

    def reply(request):
        prompt = request["messages"][-1]["content"]
        if "topic" in prompt.lower() and "summar" not in prompt.lower():
            return "\n".join(f"{n}. {u}" for n, u in enumerate(urls(bait)[:3], 1))
        return f"Summary, sources: {links}"

    with fake_openai.FakeOpenAI(reply=reply) as server, watched(monkeypatch) as (connects, lookups):
        endpoint = Endpoint.objects.create(name="fake", base_url=server.url, model="m", timeout_seconds=5)
        for kind in (Job.Kind.TOPICS, Job.Kind.SUMMARIES):
            with django_capture_on_commit_callbacks(execute=True):
                job = llm.create_job(project=project, kind=kind, endpoint=endpoint, user=lead)
            job.refresh_from_db()
            assert job.units.exists()
            client.force_login(lead)
            assert client.get(f"/p/{project.slug}/llm/jobs/{job.pk}/").status_code == 200
            for unit in Unit.objects.filter(job=job):
                assert client.get(f"/p/{project.slug}/llm/jobs/{job.pk}/units/{unit.pk}/").status_code == 200
        fake_port = int(server.url.split(":")[2].split("/")[0])
    assert any("/plain" in (u.raw_output or "") for u in Unit.objects.all()), "the model's URLs were not stored"
    assert_nothing_fetched(bait, connects, lookups, allowed_ports=(fake_port,))
    assert [a for a in connects if isinstance(a, tuple) and a[1] == fake_port], "the endpoint itself was called"


def test_an_annotators_explanation_full_of_urls_fetches_nothing(bait, monkeypatch, project, annotator, lead, client):
    from annotation.protocols.models import Campaign, Protocol

    campaign = Campaign.objects.create(project=project, slug="t1", name="T1", protocol=Protocol.TOFUEVAL_TASK1)
    item = make_item(campaign, project, "i1", "main")
    assignment = protocol_services.assign(item=item, annotator=annotator, seed=1)
    first = sentences(item)[0]
    draft = {f"s-{first.pk}": "inconsistent", f"e-{first.pk}": " ".join(urls(bait))}
    with watched(monkeypatch) as (connects, lookups):
        client.force_login(annotator)
        saved = client.post(
            f"/p/{project.slug}/assignments/{assignment.pk}/draft/",
            json.dumps({"draft": draft, "version": 0}),
            content_type="application/json",
        )
        assert saved.status_code == 200, saved.content
        assert client.get(f"/p/{project.slug}/assignments/{assignment.pk}/").status_code == 200
        client.force_login(lead)
        assert client.get(f"/p/{project.slug}/documents/{item.document.pk}/").status_code == 200
    assert Summary.objects.exists()
    assert_nothing_fetched(bait, connects, lookups)
