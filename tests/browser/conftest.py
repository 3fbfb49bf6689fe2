import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def page(monkeypatch):
    """A Playwright page in Debian's Chromium (never a downloaded browser)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is missing: apt-get install chromium (.ci/run does it)")
    # Playwright's sync API runs an event loop in this thread; the ORM calls in the test are
    # ordinary blocking calls made between browser steps, not from inside the loop.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context()
        page = context.new_page()
        page.console_errors = []
        page.on("console", lambda msg: msg.type == "error" and page.console_errors.append(msg.text))
        yield page
        # ORM calls made while Playwright's loop runs get their own (context-local) connections;
        # close them here, in that same context, so the test database can be dropped.
        from django.db import connections

        connections.close_all()
        browser.close()
