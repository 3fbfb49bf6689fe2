"""Stored XSS and the CSP, in Chromium (issue 8, second part).

The matrix's world (tests/security/test_matrix.py) is filled with payloads (xss_data.py), then
every GET route of the URL configuration is opened by every role allowed on it, plus the admin,
the sign-in pages and the API's HTML pages. Two passes:

- with the CSP bypassed, so that escaping alone stands between the data and the page: no payload
  runs (a trap function, alert/confirm/prompt, dialogs, console "XSS-", requests a live payload
  would make) and no element that a payload would create is in the DOM;
- with the CSP enforced: no page breaks it (a violation event or a console CSP error means a page
  relies on something the policy forbids).
"""

import contextlib
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import reverse
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import ARGS, CHROMIUM
from tests.security import test_matrix, xss_data
from tests.security.test_matrix import EXPECTED, ROUTES, url_for

# the matrix's world and its fast password hashing, as fixtures of this module
world, _fast_passwords = test_matrix.world, test_matrix._fast_passwords

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROLE_ORDER = ("lead", "annotator", "reviewer", "viewer", "outsider")

TRAP = """
window.__xssHits = [];
window.__cspViolations = [];
window.__xss = (n) => window.__xssHits.push('__xss(' + n + ')');
for (const name of ['alert', 'confirm', 'prompt', 'print']) {
  window[name] = (...args) => window.__xssHits.push(name + '(' + args.join(',') + ')');
}
document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(
  `${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber} ${e.sample || ''}`));
"""

# What a payload leaves in the DOM when escaping failed, even if it has not run (yet).
DOM_CHECK = """() => {
  const bad = [];
  const urlAttrs = ['href', 'src', 'action', 'formaction', 'data', 'background', 'poster', 'xlink:href'];
  for (const el of document.querySelectorAll('*')) {
    if (el.hasAttribute('data-xss')) bad.push('payload element ' + el.outerHTML.slice(0, 120));
    if (el.shadowRoot) bad.push('shadow root on <' + el.tagName + '>');
    for (const a of el.attributes) {
      if (a.name.startsWith('on') || a.name.startsWith('hx-on')) bad.push(`${a.name} on <${el.tagName}>`);
      if (a.name === 'srcdoc' || (urlAttrs.includes(a.name) && /^\\s*(javascript|vbscript|data:text)/i.test(a.value)))
        bad.push(`${a.name}=${a.value.slice(0, 60)} on <${el.tagName}>`);
      if (a.name.startsWith('hx-') && /[?&]xss=|__xss/.test(a.value)) bad.push(`${a.name}=${a.value} on <${el.tagName}>`);
    }
  }
  for (const s of document.scripts) {
    if (s.type === 'application/json') continue;
    if (!s.src) bad.push('inline script ' + s.textContent.slice(0, 80));
    else if (new URL(s.src).origin !== location.origin) bad.push('foreign script ' + s.src);
  }
  for (const tag of ['iframe', 'frame', 'object', 'embed', 'base', 'meta[http-equiv="refresh" i]', 'body meta', 'body link'])
    if (document.querySelector(tag)) bad.push('element ' + tag);
  return bad;
}"""


def gets(world, extra) -> list[tuple[str, str, str, bool]]:
    """(what, role, url, strict) for every GET route and every role allowed on it."""
    out = []
    for name, spec in sorted(EXPECTED.items()):
        if "GET" not in spec.methods or name not in ROUTES:
            continue
        url = url_for(name, world, world["project"].slug)
        roles = [r for r in ROLE_ORDER if r in spec.allowed] or ["anonymous"]
        if roles != ["anonymous"] and "outsider" in roles and len(roles) > 1:
            roles.remove("outsider")  # instance-wide LLM pages: the demo's lead stands for any lead
        strict = spec.strict_success and not spec.public  # a public route here gets a made-up token
        out += [(name, role, url, strict) for role in roles]
    slug, ids = world["project"].slug, {**world["ids"], **extra}
    out += [
        ("real import job", "lead", reverse("corpus:import_job", args=[slug, ids["real_import_job"]]), True),
        (
            "ambiguity screen",
            "annotator",
            reverse("protocols:assignment", args=[slug, ids["ambiguity_assignment"]]),
            True,
        ),
        ("span screen", "annotator", reverse("protocols:assignment", args=[slug, ids["spans_assignment"]]), True),
        ("failed unit", "lead", reverse("llm:unit", args=[slug, ids["job"], ids["failed_unit"]]), True),
        ("debate job", "lead", reverse("llm:job", args=[slug, ids["debate_job"]]), True),
        ("debate unit", "lead", reverse("llm:unit", args=[slug, ids["debate_job"], ids["debate_unit"]]), True),
        ("agreement, filtered", "lead", reverse("agreement:dashboard", args=[slug, ids["task1"]]) + "?round=x", True),
        ("document list, filtered", "lead", reverse("corpus:documents", args=[slug]) + "?q=%3Cscript%3E", True),
        ("sign-in page", "anonymous", reverse("account_login"), True),
        ("password reset", "anonymous", reverse("account_reset_password"), True),
        ("password change", "lead", reverse("account_change_password"), True),
        ("API docs", "lead", reverse("api-docs"), True),
    ]
    out += [(f"admin {path}", "staff", path, True) for path in admin_paths()]
    return out


def admin_paths() -> list[str]:
    paths = ["/admin/"]
    for model in admin.site._registry:
        info = (model._meta.app_label, model._meta.model_name)
        paths.append(reverse("admin:{}_{}_changelist".format(*info)))
        first = model.objects.order_by("pk").first()
        if first is not None:
            paths.append(reverse("admin:{}_{}_change".format(*info), args=[first.pk]))
    return paths


@pytest.fixture
def payload_world(world, make_user):
    extra = xss_data.poison(world)
    world["users"]["staff"] = make_user("staff-xss", is_staff=True, is_superuser=True)
    return world, extra


@pytest.fixture
def chromium(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        from django.db import connections

        connections.close_all()
        browser.close()


class Visitor:
    """One browser context per role (signed in by session cookie) with the traps installed."""

    def __init__(self, browser, base, world, *, bypass_csp: bool):
        self.browser, self.base, self.world, self.bypass_csp = browser, base, world, bypass_csp
        self.pages = {}

    def page(self, role):
        if role not in self.pages:
            context = self.browser.new_context(bypass_csp=self.bypass_csp)
            if role != "anonymous":
                client = Client()
                client.force_login(self.world["users"][role])
                cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
                context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": self.base}])
            context.add_init_script(TRAP)
            page = context.new_page()
            page.events = []
            page.on(
                "dialog", lambda dialog, page=page: (page.events.append(f"dialog {dialog.message}"), dialog.dismiss())
            )
            page.on("console", lambda msg, page=page: self.console(page, msg))
            page.on("request", lambda request, page=page: self.request(page, request))
            page.on("popup", lambda popup, page=page: page.events.append(f"popup {popup.url}"))
            self.pages[role] = page
        return self.pages[role]

    def console(self, page, msg):
        if "XSS-" in msg.text or (msg.type == "error" and "Content Security Policy" in msg.text):
            page.events.append(f"console {msg.type}: {msg.text[:200]}")

    def request(self, page, request):
        url = request.url
        if not url.startswith(self.base) and not url.startswith("data:"):
            page.events.append(f"request to {url}")
        elif re.search(r"[?&]xss=|__xss", url) and not re.search(r"[?&]xss=|__xss", page.url):
            page.events.append(f"request made by a payload: {url}")

    def visit(self, role, url, *, settle=True) -> tuple[int, list[str]]:
        page = self.page(role)
        page.events.clear()
        response = page.goto(self.base + url, wait_until="load")
        if settle:  # htmx swaps in partials (job status, agreement figures) after load
            with contextlib.suppress(PlaywrightTimeout):  # a page that keeps polling is checked as it stands
                page.wait_for_load_state("networkidle", timeout=4000)
        page.wait_for_timeout(100)  # autofocus, toggle and animation events fire after load
        problems = list(page.events)
        problems += page.evaluate("window.__xssHits || []")
        problems += [f"CSP violation: {v}" for v in page.evaluate("window.__cspViolations || []")]
        if self.bypass_csp:
            problems += page.evaluate(DOM_CHECK)
        return (response.status if response else 0), problems


# A page that makes every mistake escaping prevents: each payload raw in the contexts our
# templates use, and decoded once more (HTML entities, %-escapes, JSON \\u escapes) as a page
# that double-decodes would. The test below proves the traps catch every payload so placed.
CONTROL_CONTEXTS = [
    "<p>{p}</p>",
    '<input value="{p}">',
    "<input value='{p}'>",
    '<a href="{p}">link</a>',
    "<textarea>{p}</textarea>",
    "<pre>{p}</pre>",
    '<script>var s = "{p}";</script>',
    "<script>var s = '{p}';</script>",
]


def control_page(payload: str) -> str:
    import codecs
    import html
    from urllib.parse import unquote

    decoded = {payload, html.unescape(payload), unquote(payload), codecs.decode(payload, "unicode_escape")}
    body = "".join(context.format(p=p) for p in decoded for context in CONTROL_CONTEXTS)
    return f"<!DOCTYPE html><html><head><title>control</title></head><body>{body}</body></html>"


def html_routes(world, extra):
    """The routes answering a browser with HTML (downloads and images are checked apart)."""
    client_for = {}
    html, other = [], []
    for what, role, url, strict in gets(world, extra):
        if role not in client_for:
            client_for[role] = Client()
            if role != "anonymous":
                client_for[role].force_login(world["users"][role])
        response = client_for[role].get(url, HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
        content_type = response.get("Content-Type", "")
        if response.streaming:
            b"".join(response.streaming_content)
        (html if content_type.startswith("text/html") else other).append((what, role, url, strict, response))
    return html, other


def test_no_payload_runs_or_lands_in_the_dom_on_any_page(live_server, chromium, payload_world):
    world, extra = payload_world
    html, other = html_routes(world, extra)
    assert len(xss_data.PAYLOADS) >= 50
    assert len(html) >= 60, f"too few pages to mean anything: {len(html)}"
    visitor = Visitor(chromium, live_server.url, world, bypass_csp=True)
    failures = []
    for what, role, url, strict, _ in html:
        status, problems = visitor.visit(role, url)
        if status >= 500 or (strict and status == 404):
            failures.append(f"{what} as {role} {url}: HTTP {status}")
        failures += [f"{what} as {role} {url}: {p}" for p in problems]
    for what, _, url, _, response in other:  # downloads, images, JSON: never HTML, never sniffed
        if response.status_code == 200:
            if response.get("X-Content-Type-Options") != "nosniff":
                failures.append(f"{what} {url}: no X-Content-Type-Options: nosniff")
            if "text/html" in response.get("Content-Type", ""):
                failures.append(f"{what} {url}: served as HTML")
    if failures:
        Path(settings.BASE_DIR, "var", "xss-failures.txt").write_text("\n".join(failures))
    assert not failures, f"{len(failures)} problems:\n" + "\n".join(failures[:80])


def test_no_page_breaks_the_csp(live_server, chromium, payload_world):
    world, extra = payload_world
    html, _ = html_routes(world, extra)
    visitor = Visitor(chromium, live_server.url, world, bypass_csp=False)
    failures, seen = [], set()
    for what, role, url, _, _ in html:
        if (what, url) in seen:  # one role per page is enough for the policy
            continue
        seen.add((what, url))
        _, problems = visitor.visit(role, url)
        failures += [f"{what} as {role} {url}: {p}" for p in problems]
    if failures:
        Path(settings.BASE_DIR, "var", "csp-failures.txt").write_text("\n".join(failures))
    assert not failures, "\n".join(failures[:80])


def test_the_traps_catch_every_payload_left_unescaped(live_server, chromium, world):
    """The detector itself: every payload, rendered raw, is seen (it ran, or its element is live)."""
    visitor = Visitor(chromium, live_server.url, world, bypass_csp=True)
    page = visitor.page("anonymous")
    page.context.route(
        re.compile(r".*/__escaping-control/\d+$"),
        lambda route: route.fulfill(
            content_type="text/html", body=control_page(xss_data.PAYLOADS[int(route.request.url.rsplit("/", 1)[1])])
        ),
    )
    missed = []
    for n, payload in enumerate(xss_data.PAYLOADS):
        _, problems = visitor.visit("anonymous", f"/__escaping-control/{n}", settle=False)
        if not problems:
            missed.append(payload)
    assert not missed, f"payloads the traps do not see even unescaped: {missed}"
