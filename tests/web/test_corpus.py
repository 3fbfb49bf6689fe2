import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.corpus import services
from annotation.corpus.models import Document, ImportJob

pytestmark = pytest.mark.django_db

GOOD_LINES = [
    {"type": "document", "id": "up-1", "dataset": "toy", "text": "Ana met Ben at noon."},
    {"type": "summary", "id": "up-s1", "document": "up-1", "system": "m", "text": "Ana met Ben."},
]


def upload(name="data.jsonl", lines=GOOD_LINES):
    content = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return SimpleUploadedFile(name, content, content_type="application/json")


@pytest.fixture
def lead_client(client_for, world):
    return client_for(world["lead"])


# -- import ----------------------------------------------------------------------------------
def test_lead_uploads_a_file_and_lands_on_the_finished_job(lead_client, project, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(
            reverse("corpus:import", args=[project.slug]), {"format": "jsonl", "files": [upload()]}
        )
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("corpus:import_job", args=[project.slug, job.pk])
    assert Document.objects.filter(project=project, external_id="up-1").exists()
    page = lead_client.get(response["Location"])
    assert "Imported" in page.text and "hx-trigger" not in page.text


def test_several_files_and_a_tofueval_documents_file_are_passed_on(lead_client, project, monkeypatch):
    calls = []
    monkeypatch.setattr(
        services,
        "start_import",
        lambda **kw: (
            calls.append(kw)
            or ImportJob.objects.create(project=kw["project"], created_by=kw["user"], format=kw["format"])
        ),
    )
    files = [upload("a.csv"), upload("b.csv")]
    response = lead_client.post(
        reverse("corpus:import", args=[project.slug]),
        {"format": "tofueval", "files": files, "documents": upload("docs.jsonl")},
    )
    assert response.status_code == 302
    assert [f.name for f in calls[0]["files"]] == ["a.csv", "b.csv", "docs.jsonl"]
    assert calls[0]["options"] == {"documents_name": "docs.jsonl"}


def test_import_without_a_file_shows_a_form_error(lead_client, project):
    response = lead_client.post(reverse("corpus:import", args=[project.slug]), {"format": "jsonl"})
    assert response.status_code == 400 and "This field is required." in response.text
    assert not ImportJob.objects.exists()


def test_documents_file_is_refused_for_other_formats(lead_client, project):
    data = {"format": "jsonl", "files": [upload()], "documents": upload("docs.jsonl")}
    response = lead_client.post(reverse("corpus:import", args=[project.slug]), data)
    assert response.status_code == 400 and "only read by the TofuEval format" in response.text


def test_unknown_format_is_a_form_error(lead_client, project):
    response = lead_client.post(reverse("corpus:import", args=[project.slug]), {"format": "xml", "files": [upload()]})
    assert response.status_code == 400 and "Select a valid choice" in response.text


def test_running_job_polls_itself_with_htmx(lead_client, project, world):
    job = ImportJob.objects.create(project=project, created_by=world["lead"], format="jsonl", status="running")
    services.set_progress(job.pk, "writing", 30, 120)
    url = reverse("corpus:import_job", args=[project.slug, job.pk])
    page = lead_client.get(url)
    assert f'hx-get="{url}"' in page.text and 'hx-trigger="every 2s"' in page.text
    partial = lead_client.get(url, headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert "<html" not in partial.text and 'value="25"' in partial.text and "30 of 120" in partial.text


def test_finished_job_stops_the_polling_and_lists_errors(lead_client, project, world):
    errors = [
        {"file": "a.jsonl", "line": 3, "field": "text", "message": "<b>missing</b>", "text": "..."},
        {"text": "Unknown format 'x'."},
    ]
    job = ImportJob.objects.create(
        project=project, created_by=world["lead"], format="jsonl", status="failed", errors=errors
    )
    url = reverse("corpus:import_job", args=[project.slug, job.pk])
    partial = lead_client.get(url, headers={"HX-Request": "true"})
    assert partial.status_code == 286
    assert "Nothing was imported" in partial.text and "&lt;b&gt;missing&lt;/b&gt;" in partial.text
    assert "Unknown format &#x27;x&#x27;." in partial.text
    assert "hx-trigger" not in partial.text


def test_job_of_another_project_is_404(client_for, world, other_project, project):
    job = ImportJob.objects.create(project=other_project, created_by=world["outsider"], format="jsonl")
    response = client_for(world["lead"]).get(reverse("corpus:import_job", args=[project.slug, job.pk]))
    assert response.status_code == 404


# -- export ----------------------------------------------------------------------------------
@pytest.mark.parametrize("role", ["lead", "viewer"])
def test_export_streams_jsonl(client_for, world, data, project, role):
    response = client_for(world[role]).get(reverse("corpus:export", args=[project.slug]))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"].startswith('attachment; filename="demo-')
    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert {"news-1", "meet-1"} <= {line["id"] for line in lines if line["type"] == "document"}


def test_export_has_no_bad_input_but_refuses_post(client_for, world, project):
    assert client_for(world["lead"]).post(reverse("corpus:export", args=[project.slug])).status_code == 405


# -- document browser --------------------------------------------------------------------------
def test_reviewer_lists_documents_with_summary_counts(client_for, world, data, project):
    response = client_for(world["reviewer"]).get(reverse("corpus:documents", args=[project.slug]))
    rows = {d.external_id: d.summary_count for d in response.context["page"].object_list}
    assert rows == {"meet-1": 0, "news-1": 2, "news-2": 0}


def test_documents_filter_by_dataset_split_and_id(lead_client, data, project):
    url = reverse("corpus:documents", args=[project.slug])
    ids = lambda query: [d.external_id for d in lead_client.get(url, query).context["page"].object_list]  # noqa: E731
    assert ids({"dataset": "news"}) == ["news-1", "news-2"]
    assert ids({"dataset": "news", "split": "dev"}) == ["news-2"]
    assert ids({"q": "MEET"}) == ["meet-1"]


def test_documents_bad_filters_give_an_empty_list_not_an_error(lead_client, data, project):
    url = reverse("corpus:documents", args=[project.slug])
    response = lead_client.get(url, {"dataset": "no-such-dataset", "page": "banana"})
    assert response.status_code == 200 and "No documents match." in response.text


def test_document_page_shows_text_summaries_sentences_and_judgments(lead_client, data, project):
    response = lead_client.get(reverse("corpus:document", args=[project.slug, data["text"].pk]))
    text = response.text
    assert "The council met on Monday." in text and "Budget" in text
    assert "model_A" in text and "0–27" in text and "edit of s1" in text
    assert "Monday, not Tuesday" in text and "inconsistent" in text and "A2" in text


def test_reviewers_browse_documents_blind_to_summarizers(client_for, world, data, project):
    """Review is blind: no summarizer name (nor an id that may carry one) for reviewers."""
    response = client_for(world["reviewer"]).get(reverse("corpus:document", args=[project.slug, data["text"].pk]))
    text = response.text
    assert "The council met on Monday." in text and "Monday, not Tuesday" in text
    assert "model_A" not in text and "System:" not in text and "edit of s1" not in text
    assert "Summary 1" in text


def test_dialogue_shows_speakers_and_turn_numbers(lead_client, data, project):
    response = lead_client.get(reverse("corpus:document", args=[project.slug, data["dialogue"].pk]))
    assert '<span class="turn-number">2</span> <span class="speaker">Ben</span>' in response.text


def test_imported_text_is_escaped(lead_client, project):
    doc = Document.objects.create(project=project, external_id="<i>x</i>", text="<script>alert(1)</script>")
    response = lead_client.get(reverse("corpus:document", args=[project.slug, doc.pk]))
    assert "<script>alert" not in response.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
    assert "&lt;i&gt;x&lt;/i&gt;" in response.text


def test_document_of_another_project_is_404(client_for, world, other_project, project):
    doc = Document.objects.create(project=other_project, external_id="secret", text="x")
    response = client_for(world["lead"]).get(reverse("corpus:document", args=[project.slug, doc.pk]))
    assert response.status_code == 404


def test_document_page_query_count_is_flat(lead_client, data, project, django_assert_num_queries):
    url = reverse("corpus:document", args=[project.slug, data["text"].pk])
    # session, user, membership, nav, document, topics, summaries, sentences, pseudonyms, judgments
    with django_assert_num_queries(10):
        lead_client.get(url)


def test_document_list_query_count_is_flat(lead_client, data, project, django_assert_num_queries):
    url = reverse("corpus:documents", args=[project.slug])
    # session, user, membership, nav, datasets, splits, count, page
    with django_assert_num_queries(8):
        lead_client.get(url)
