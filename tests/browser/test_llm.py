"""A lead, in Chromium: adds an endpoint (the fake OpenAI server), starts topic and summary jobs
from two endpoints, follows a job's progress, opens a failure with its raw output, and edits a
prompt into a new version. Keyboard-reachable forms, no console errors under the CSP."""

import pytest
from playwright.sync_api import expect

from annotation.corpus.models import Document, Summary, Topic
from annotation.llm import services
from annotation.llm.models import Endpoint, Job, Prompt
from tests.browser.test_pages import sign_in
from tests.llm import fake_openai

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def reply(request):
    prompt = request["messages"][-1]["content"]
    if "main topics" in prompt:
        return "1. the library budget\n2. parking permits\n3. the new bus line"
    if "Summarize" in prompt:
        return "The council approved the library budget." if "library" in prompt.split("topic")[-1] else "Sure! " * 60
    return "yes"


def test_a_lead_runs_llm_jobs_from_the_browser(live_server, page, lead, project):
    services.load_default_prompts()
    text = "Ana: The council approved the library budget.\nBen: Parking permits cost more.\nAna: A bus line opens."
    Document.objects.create(project=project, external_id="d1", kind="dialogue", text=text)
    base = live_server.url
    sign_in(page, base, "lead")
    with fake_openai.FakeOpenAI(reply=reply) as server:
        # An endpoint, typed in the form.
        page.goto(f"{base}/llm/endpoints/")
        page.fill("#id_name", "fake-gpt")
        page.select_option("#id_kind", "openai")
        page.fill("#id_base_url", server.url)
        page.fill("#id_model", "fake-model")
        page.fill("#id_key_env", "ATTEST_BROWSER_TEST_KEY")
        page.get_by_role("button", name="Add endpoint").click()
        expect(page.locator("table")).to_contain_text("not set here")  # the key variable is unset
        Endpoint.objects.filter(name="fake-gpt").update(key_env="")
        Endpoint.objects.create(name="baseline", kind=Endpoint.Kind.OFFLINE)

        # Topics from the project page.
        page.goto(f"{base}/p/demo/")
        page.get_by_role("link", name="LLM jobs").click()
        page.select_option("#id_kind", "topics")
        page.get_by_label("fake-gpt").check()
        page.get_by_role("button", name="Start job").click()
        expect(page.locator("#job-status")).to_contain_text("1 done · 0 failed · 0 remaining of 1")
        expect(page.locator("#job-status")).to_contain_text("Done")
        assert Topic.objects.filter(origin="llm").count() == 3

        # Summaries from two endpoints at once: one job each.
        page.goto(f"{base}/p/demo/llm/jobs/")
        page.select_option("#id_kind", "summaries")
        page.get_by_label("fake-gpt").check()
        page.get_by_label("baseline").check()
        page.get_by_role("button", name="Start job").click()
        expect(page.locator(".messages")).to_contain_text("started")
        assert Job.objects.filter(kind="summaries").count() == 2
        llm_job = Job.objects.get(kind="summaries", endpoint__name="fake-gpt")
        page.goto(f"{base}/p/demo/llm/jobs/{llm_job.pk}/")
        status = page.locator("#job-status")
        expect(status).to_contain_text("1 done · 2 failed")  # two answers are far over 50 words
        expect(status).to_contain_text("Invalid output")
        page.locator(".failures a").first.click()
        expect(page.locator("pre.raw-output")).to_contain_text("Sure! Sure!")
        assert Summary.objects.filter(origin="llm").count() == 1
        assert Summary.objects.filter(origin="baseline").count() == 3

    # A prompt edited into version 2, with a preview on the real document.
    page.goto(f"{base}/llm/prompts/tofueval-summary/")
    expect(page.locator("pre.prompt-text").first).to_contain_text("The council approved the library budget")
    page.fill("#id_template", "Summarise {{ document }} about {{ topic }} in under 50 words.")
    page.fill("#id_note", "shorter")
    page.get_by_role("button", name="Save as a new version").click()
    expect(page.locator(".messages")).to_contain_text("Saved as version 2")
    assert Prompt.objects.filter(slug="tofueval-summary").count() == 2
    assert page.console_errors == []
