"""Drills on the TofuEval task 1 screen and the shared autosave core (static/js/draftform.js):
the network drops, the tab reloads mid-typing, the session ends while the annotator works, and
two tabs edit offline. What must hold in each: no typed text is lost without a clear message,
and no one's work silently overwrites another's. (test_task1.py has the plain reload and the
two-tab conflict online; its assignment fixture and helpers are reused here.)"""

import re
import time

import pytest
from playwright.sync_api import expect

from annotation.protocols.models import Assignment
from tests.browser import test_task1 as task1
from tests.browser.test_pages import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
assignment = task1.assignment  # the same small world: one item, two summaries of two sentences
NOT_SAVED = re.compile(r"^Not saved — retrying")
SIGNED_OUT = re.compile(r"^You are signed out: sign in again in another tab; your work is kept here")


def draft_of(assignment) -> dict:
    return Assignment.objects.get(pk=assignment.pk).draft


def eventually(check, timeout: float = 10.0):
    """Poll the database until `check()` is true; its last value otherwise (for the assert)."""
    deadline = time.monotonic() + timeout
    while not (value := check()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


def wait_saved_text(assignment, name: str, text: str) -> None:
    """The screen says "Saved" as soon as the radio before the text is saved: wait for the text."""
    assert eventually(lambda: draft_of(assignment).get(name) == text), draft_of(assignment)


def status(page):
    return page.locator("#save-status")


def explanation_of_first_sentence(page) -> str:
    return "e" + task1.sentence_names(page)[0][1:]


def type_into(page, name: str, text: str) -> None:
    """Carry on typing at the end of a field, as after switching back to the tab."""
    box = page.locator(f"[name='{name}']")
    box.focus()
    page.keyboard.press("End")
    page.keyboard.type(text)


def js_errors(page) -> list:
    """Uncaught JavaScript errors (the failed requests a drill provokes are logged too: not those)."""
    return [e for e in page.console_errors if "Failed to load resource" not in e]


def test_typing_through_a_network_outage_reaches_the_server_once_it_is_back(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    task1.open_task(page, base, assignment)
    box = explanation_of_first_sentence(page)
    page.keyboard.press("i")  # 1.1 inconsistent: the cursor goes into its explanation
    page.keyboard.type("Before the outage.")
    wait_saved_text(assignment, box, "Before the outage.")

    page.context.set_offline(True)
    page.keyboard.type(" During the outage,")
    expect(status(page)).to_have_text(NOT_SAVED, timeout=10000)
    page.keyboard.type(" still typing.")
    page.wait_for_timeout(2500)  # a retry or two fail meanwhile
    expect(status(page)).to_have_text(NOT_SAVED)
    assert draft_of(assignment)[box] == "Before the outage."

    page.context.set_offline(False)
    task1.wait_saved(page)
    whole = "Before the outage. During the outage, still typing."
    wait_saved_text(assignment, box, whole)
    assert page.locator(f"[name='{box}']").input_value() == whole
    assert js_errors(page) == [], page.console_errors


def test_a_reload_right_after_typing_keeps_the_text(live_server, page, assignment):
    """The keystrokes are still inside the 600 ms debounce when the page goes: the save on
    pagehide (keepalive) carries them."""
    base = live_server.url
    sign_in(page, base, "ann1")
    task1.open_task(page, base, assignment)
    box = explanation_of_first_sentence(page)
    page.keyboard.press("i")
    task1.wait_saved(page)
    page.keyboard.type("Typed just before the reload.")
    page.reload()
    page.wait_for_load_state("networkidle")
    wait_saved_text(assignment, box, "Typed just before the reload.")
    expect(page.locator(f"[name='{box}']")).to_have_value("Typed just before the reload.")
    # The reloaded page agrees with the server: the next edit saves without a conflict.
    type_into(page, box, " And after it.")
    task1.wait_saved(page)
    expect(page.locator("#conflict-banner")).to_be_hidden()
    wait_saved_text(assignment, box, "Typed just before the reload. And after it.")
    assert js_errors(page) == [], page.console_errors


@pytest.mark.parametrize("reached_server", [True, False], ids=["answer-not-back", "lost-in-transit"])
def test_a_reload_while_a_save_is_in_flight_keeps_what_was_typed_after_it(
    live_server, page, assignment, reached_server
):
    """The hard case for the keepalive save: the page goes while an earlier autosave still waits
    for its answer (which the server either has written, or never got), so the last keystrokes
    have no version to be sent with."""
    base = live_server.url
    sign_in(page, base, "ann1")
    task1.open_task(page, base, assignment)
    box = explanation_of_first_sentence(page)
    page.keyboard.press("i")
    task1.wait_saved(page)
    held = []

    def hold_the_first_answer(route):
        if held:
            route.continue_()
        else:
            held.append(route.fetch() if reached_server else route)  # and never answer the page

    page.route("**/draft/", hold_the_first_answer)
    page.keyboard.type("First part,")
    expect(status(page)).to_have_text("Saving…", timeout=5000)
    while not held:
        page.wait_for_timeout(50)
    page.keyboard.type(" second part.")
    page.reload()
    page.unroute("**/draft/")
    page.wait_for_load_state("networkidle")
    whole = "First part, second part."
    expect(page.locator(f"[name='{box}']")).to_have_value(whole, timeout=10000)
    task1.wait_saved(page)
    wait_saved_text(assignment, box, whole)
    expect(page.locator("#conflict-banner")).to_be_hidden()


def sign_out_in_another_tab(context, base):
    other = context.new_page()
    other.goto(f"{base}/")
    other.get_by_role("button", name="Sign out").click()
    other.wait_for_url(re.compile(r"/accounts/login/"))
    return other


def test_signed_out_in_another_tab_the_screen_says_so_keeps_the_text_and_saves_after_signing_in(
    live_server, page, assignment
):
    base = live_server.url
    sign_in(page, base, "ann1")
    task1.open_task(page, base, assignment)
    box = explanation_of_first_sentence(page)
    s1, s2, s3, s4 = task1.sentence_names(page)
    page.keyboard.press("i")
    page.keyboard.type("Saved before signing out.")
    wait_saved_text(assignment, box, "Saved before signing out.")

    other = sign_out_in_another_tab(page.context, base)
    page.bring_to_front()
    type_into(page, box, " Typed while signed out.")
    expect(status(page)).to_have_text(SIGNED_OUT, timeout=10000)
    page.wait_for_timeout(1500)  # a retry meanwhile changes nothing
    expect(status(page)).to_have_text(SIGNED_OUT)
    whole = "Saved before signing out. Typed while signed out."
    assert draft_of(assignment)[box] == "Saved before signing out."
    assert page.locator(f"[name='{box}']").input_value() == whole
    kept = page.evaluate("Object.values(sessionStorage).filter(v => v.includes('Typed while signed out')).length")
    assert kept == 1  # and in the tab's storage, should the page go

    sign_in(other, base, "ann1")  # a new session, and a new CSRF token
    page.bring_to_front()
    # What a browser does when the annotator comes back to the tab (headless pages keep focus).
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    task1.wait_saved(page)  # retried at once, not at the end of the backoff
    wait_saved_text(assignment, box, whole)

    # The rest of the item, then the submit (which must carry the new CSRF token).
    page.locator(f"[name='{s1}'][value='inconsistent']").focus()
    for key in ("m", "j", "c", "4", "j", "c", "j", "c", "2"):
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"{base}/", timeout=10000)
    done = Assignment.objects.get(pk=assignment.pk)
    assert done.status == Assignment.Status.SUBMITTED
    assert done.judgments.get(target=f"sentence:{s1[2:]}", dimension="consistency").explanation == whole
    assert js_errors(page) == [], page.console_errors


def test_a_reload_while_signed_out_keeps_the_text_through_signing_in_again(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    task1.open_task(page, base, assignment)
    box = explanation_of_first_sentence(page)
    page.keyboard.press("i")
    page.keyboard.type("Saved before signing out.")
    wait_saved_text(assignment, box, "Saved before signing out.")
    sign_out_in_another_tab(page.context, base).close()
    type_into(page, box, " Typed while signed out.")
    expect(status(page)).to_have_text(SIGNED_OUT, timeout=10000)

    prompts = []
    page.on("dialog", lambda dialog: (prompts.append(dialog.type), dialog.accept()))
    page.reload()  # the annotator reloads anyway: the login page, then back to the task
    page.wait_for_url(re.compile(r"/accounts/login/"))
    assert prompts == ["beforeunload"]  # the browser warned first
    page.fill("input[name=login]", "ann1")
    page.fill("input[name=password]", "pw-correct-horse-9")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/p/demo/assignments/{assignment.pk}/")
    whole = "Saved before signing out. Typed while signed out."
    expect(page.locator(f"[name='{box}']")).to_have_value(whole)
    task1.wait_saved(page)
    wait_saved_text(assignment, box, whole)
    expect(page.locator("#conflict-banner")).to_be_hidden()
    assert js_errors(page) == [], page.console_errors


def test_two_tabs_offline_both_edit_and_come_back_one_saves_the_other_gets_the_conflict(live_server, page, assignment):
    base = live_server.url
    sign_in(page, base, "ann1")
    tab_a, tab_b = page, page.context.new_page()
    tab_b.console_errors = []
    tab_b.on("console", lambda msg: msg.type == "error" and tab_b.console_errors.append(msg.text))
    task1.open_task(tab_a, base, assignment)
    task1.open_task(tab_b, base, assignment)
    box = explanation_of_first_sentence(tab_a)

    page.context.set_offline(True)
    tab_a.bring_to_front()
    tab_a.keyboard.press("m")  # main topic
    tab_a.keyboard.press("i")
    tab_a.keyboard.type("Tab A's explanation.")
    expect(status(tab_a)).to_have_text(NOT_SAVED, timeout=10000)
    tab_b.bring_to_front()
    tab_b.keyboard.press("x")  # irrelevant topic
    tab_b.keyboard.press("c")  # 1.1 consistent
    expect(status(tab_b)).to_have_text(NOT_SAVED, timeout=10000)
    assert draft_of(assignment) == {}

    page.context.set_offline(False)
    banners = [tab.locator("#conflict-banner") for tab in (tab_a, tab_b)]
    deadline = time.monotonic() + 15
    while sum(banner.is_visible() for banner in banners) == 0 and time.monotonic() < deadline:
        tab_a.wait_for_timeout(100)
    tab_a.wait_for_timeout(1500)  # let the other tab's retries settle too
    visible = [banner.is_visible() for banner in banners]
    assert sorted(visible) == [False, True], visible
    winner, loser = (tab_a, tab_b) if visible[1] else (tab_b, tab_a)
    task1.wait_saved(winner)
    expect(status(loser)).to_have_text("Not saved — changed in another tab")

    saved = draft_of(assignment)
    if winner is tab_a:
        assert (saved["topic_category"], saved[box]) == ("main", "Tab A's explanation.")
    else:
        assert (saved["topic_category"], saved[task1.sentence_names(tab_b)[0]]) == ("irrelevant", "consistent")
        assert not saved.get(box)
    # The loser still has its own work on screen, and keeping it is an explicit choice.
    if loser is tab_a:
        assert loser.locator(f"[name='{box}']").input_value() == "Tab A's explanation."
        assert task1.checked(loser, "topic_category") == "main"
    else:
        assert task1.checked(loser, "topic_category") == "irrelevant"
    loser.bring_to_front()
    loser.get_by_role("button", name="Keep mine").click()
    task1.wait_saved(loser)
    expect(loser.locator("#conflict-banner")).to_be_hidden()
    wait_saved_text(assignment, "topic_category", task1.checked(loser, "topic_category"))
    assert js_errors(tab_a) == [] and js_errors(tab_b) == [], (tab_a.console_errors, tab_b.console_errors)
