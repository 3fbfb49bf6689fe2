"""The Content-Security-Policy: strict on every response of every route, and nothing in our own
pages that would need it loosened (inline scripts, event-handler or style attributes)."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.accounts import middleware
from tests.security import test_matrix
from tests.security.test_matrix import EXPECTED, url_for

# the matrix's world and its fast password hashing, as fixtures of this module
world, _fast_passwords = test_matrix.world, test_matrix._fast_passwords

pytestmark = pytest.mark.django_db

REQUIRED = {
    "script-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I)
HANDLER = re.compile(r"<[a-z][^>]*\s(on[a-z]+|hx-on[:-][^=\s]*)\s*=", re.I)
STYLE_ATTR = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I)
JS_URL = re.compile(r"(href|src|action)\s*=\s*[\"']?\s*javascript:", re.I)
ROLE_ORDER = ("lead", "annotator", "reviewer", "viewer", "outsider")


def directives(header: str) -> dict[str, str]:
    parts = (part.strip().split(None, 1) for part in header.split(";") if part.strip())
    return {name: (rest[0] if rest else "") for name, *rest in parts}


def problems_with(header: str | None) -> list[str]:
    if not header:
        return ["no Content-Security-Policy header"]
    policy = directives(header)
    out = [
        f"{name} is {policy.get(name)!r}, not {value}" for name, value in REQUIRED.items() if policy.get(name) != value
    ]
    script = policy.get("script-src", "") + " " + policy.get("default-src", "")
    out += [
        f"script-src allows {word}" for word in ("'unsafe-inline'", "'unsafe-eval'", "data:", "*") if word in script
    ]
    return out


def test_the_policy_is_strict():
    assert problems_with(middleware.CSP) == []
    assert directives(middleware.CSP)["style-src"] == "'self'"
    assert directives(middleware.CSP)["default-src"] == "'self'"


def responses(world):
    """(route, response) for every GET route, as the first role allowed on it, and the pages
    the matrix leaves out (sign-in, API docs, admin, health)."""
    clients = {}

    def client(role):
        if role not in clients:
            clients[role] = Client()
            if role not in ("anonymous", "staff"):
                clients[role].force_login(world["users"][role])
        return clients[role]

    for name, spec in sorted(EXPECTED.items()):
        if "GET" in spec.methods:
            role = next((r for r in ROLE_ORDER if r in spec.allowed), "anonymous")
            response = client(role).get(url_for(name, world, world["project"].slug), HTTP_ACCEPT="text/html")
            yield name, response
    staff = Client()
    staff.force_login(world["users"]["lead"].__class__.objects.create_superuser("csp-staff", "s@example.org", "x" * 12))
    for name, who, url in [
        ("login", client("anonymous"), reverse("account_login")),
        ("password reset", client("anonymous"), reverse("account_reset_password")),
        ("password change", client("lead"), reverse("account_change_password")),
        ("healthz", client("anonymous"), "/healthz"),
        ("API docs", client("lead"), reverse("api-docs")),
        ("API schema", client("lead"), reverse("api-schema")),
        ("admin", staff, "/admin/"),
        ("404", client("lead"), "/no-such-page/"),
    ]:
        yield name, who.get(url, HTTP_ACCEPT="text/html")


def test_every_response_carries_the_strict_policy(world):
    failures = []
    for name, response in responses(world):
        assert response.status_code < 500, name
        failures += [f"{name}: {p}" for p in problems_with(response.get("Content-Security-Policy"))]
        if response.get("X-Content-Type-Options") != "nosniff":
            failures.append(f"{name}: no X-Content-Type-Options: nosniff")
        if response.get("X-Frame-Options") != "DENY" and name != "healthz":
            failures.append(f"{name}: X-Frame-Options {response.get('X-Frame-Options')!r}")
    assert not failures, "\n".join(failures)


def test_our_pages_need_no_inline_script_handler_or_style(world):
    """What the policy forbids, found in the HTML itself (the browser test sees it run)."""
    failures = []
    for name, response in responses(world):
        if (
            "text/html" not in response.get("Content-Type", "")
            or name.startswith("api-")
            or name in ("API docs", "admin")
        ):
            continue  # DRF's browsable API, Swagger UI and Django's admin are checked in the browser
        html = response.content.decode()
        for what, pattern in [
            ("inline script", INLINE_SCRIPT),
            ("event handler", HANDLER),
            ("style attribute", STYLE_ATTR),
            ("javascript: URL", JS_URL),
        ]:
            failures += [f"{name}: {what}: {m.group(0)[:100]}" for m in pattern.finditer(html)]
    assert not failures, "\n".join(failures)


def test_templates_hold_no_inline_script_handler_or_style():
    """Every template on disk, including those no route of the matrix reaches with data."""
    from django.conf import settings

    failures = []
    for path in sorted((settings.BASE_DIR / "templates").rglob("*.html")):
        text = path.read_text()
        for what, pattern in [
            ("inline script", INLINE_SCRIPT),
            ("event handler", HANDLER),
            ("style attribute", STYLE_ATTR),
            ("javascript: URL", JS_URL),
            ("|safe", re.compile(r"\|\s*safe\b|\{%\s*autoescape\s+off")),
        ]:
            failures += [
                f"{path.relative_to(settings.BASE_DIR)}: {what}: {m.group(0)[:80]}" for m in pattern.finditer(text)
            ]
    assert not failures, "\n".join(failures)
