"""The authorization matrix, generated from the URL configuration (issue 8, first part).

Every route of the URL tree is listed by walking the resolver; each one must have an entry in
EXPECTED (how to fill its kwargs, which roles may get through, which methods it accepts) or be
listed in SKIPPED with a reason, so a new route without an entry fails `test_every_route_is_in_the_matrix`.

For each route, a fresh small world is built (the "demo" project with a member of every role,
an outsider who leads "other", and one object of every kind the URLs point at), then each role
x method is requested:

- anonymous: a redirect to the login page (HTML) or 401/403 (API);
- outsider (lead of "other" only): 404 on demo's URL, and 404 again on the same URL under
  their own project's slug with demo's object ids (no cross-project object access);
- members whose role is not allowed: 404 (never 403, never a success);
- allowed roles: anything but 404 and 5xx (200, 302, 400, 405 ... are fine).
"""

from dataclasses import dataclass, field

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.corpus.models import Document, ImportJob, Summary
from annotation.llm.models import Endpoint, Job, Prompt, Unit
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import services as protocol_services
from annotation.protocols.models import Assignment, Campaign, Item, Protocol
from tests.protocols.conftest import EXPLANATION, make_item, sentences, submit_labels

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "outsider", "annotator", "reviewer", "lead", "viewer")
MEMBERS = {"annotator", "reviewer", "lead", "viewer"}
LOGIN = "/accounts/login/"

# Routes left out of the matrix on purpose, by pattern prefix, with the reason.
SKIPPED = {
    "healthz": "public liveness probe for load balancers; no project data",
    "admin/": "Django admin: staff only, guarded by Django itself (and allauth's login)",
    "accounts/": "allauth's sign-in, sign-up and password pages: public by design",
    "api/schema/": "OpenAPI schema of the API: no project data",
    "api/docs/": "Swagger UI of the API: no project data",
    "static/": "static files",
    "media/": "uploaded files are never served",
    "__debug__/": "debug toolbar (development only)",
}


@dataclass(frozen=True)
class Rule:
    allowed: frozenset  # roles that may get through (besides anonymous, handled apart)
    methods: tuple = ("GET",)
    kwargs: dict = field(default_factory=dict)  # kwarg -> key of the world (or a literal "=value")
    api: bool = False
    public: bool = False  # no login required (anonymous is treated like any role)
    # False when the allowed roles' answer depends on an object's state we do not build
    # (then only "not 5xx" is checked for them; refusals are checked all the same).
    strict_success: bool = True
    # False when an empty POST names no object (an item, a seed) and the view answers 404 for
    # the body, not the role; the GET of the same route checks the role.
    strict_empty_post: bool = True
    project_scoped: bool = True


def rule(allowed, methods=("GET",), **kw) -> Rule:
    return Rule(allowed=frozenset(allowed), methods=tuple(methods), **kw)


EVERYONE = MEMBERS
LEAD = {"lead"}
REVIEW = {"lead", "reviewer"}  # Membership.can_review / can_browse_corpus
DASH = {"lead", "viewer"}  # can_read_dashboards / can_export / can_see_systems
GP = ("GET", "POST")
P = ("POST",)
T1 = {"pk": "task1"}
UNIT = {"pk": "task1", "item": "flagged_item", "sentence": "flagged_sentence"}

EXPECTED: dict[str, Rule] = {
    # site-wide
    "home": rule(EVERYONE | {"outsider"}, project_scoped=False),
    "accounts:accept": rule(set(), GP, kwargs={"token": "=not-a-real-token"}, public=True, project_scoped=False),
    # projects
    "projects:detail": rule(EVERYONE),
    "projects:invite": rule(LEAD, GP),
    # corpus
    "corpus:import": rule(LEAD, GP),
    "corpus:import_job": rule(LEAD, kwargs={"pk": "import_job"}),
    "corpus:export": rule(DASH),
    "corpus:documents": rule(REVIEW),
    "corpus:document": rule(REVIEW, kwargs={"pk": "document"}),
    # agreement
    "agreement:dashboard": rule(DASH, kwargs=T1),
    # 404 until an agreement snapshot with that distribution exists (never recomputed here)
    "agreement:chart": rule(DASH, kwargs={**T1, "kind": "=labels"}, strict_success=False),
    # protocols: explanation rating
    "protocols:explanations_new": rule(LEAD, GP),
    # the rating screen belongs to the reviewer it was given to
    "protocols:explanations_rate": rule({"reviewer"}, GP, kwargs={"pk": "rating_assignment"}),
    "protocols:explanations_next": rule(REVIEW, kwargs={"pk": "rating"}),
    "protocols:explanations_shares": rule(DASH, kwargs={"pk": "rating"}),
    # protocols: SummEdits
    "protocols:summedits_stats": rule(DASH, kwargs={"pk": "summedits"}),
    "protocols:summedits_benchmark": rule(DASH, kwargs={"pk": "summedits"}),
    "protocols:summedits_warmup": rule(LEAD, GP, kwargs={"pk": "summedits"}, strict_empty_post=False),
    "protocols:summedits_generate": rule(LEAD, P, kwargs={"pk": "summedits"}),
    "protocols:summedits_edit_types": rule(REVIEW, GP, kwargs={"pk": "summedits"}, strict_empty_post=False),
    # protocols: ambiguity (MADISSE) and spans (Ramprasad et al.)
    "protocols:ambiguity_adjudicate": rule(REVIEW, GP, kwargs={"pk": "ambiguity"}, strict_empty_post=False),
    "protocols:ambiguity_stats": rule(DASH, kwargs={"pk": "ambiguity"}),
    "protocols:spans_stats": rule(DASH, kwargs={"pk": "spans"}),
    # protocols: annotation (the assignment belongs to the annotator)
    "protocols:assignment": rule({"annotator"}, kwargs={"pk": "assignment"}),
    "protocols:assignment_draft": rule({"annotator"}, P, kwargs={"pk": "assignment"}),
    "protocols:assignment_submit": rule({"annotator"}, P, kwargs={"pk": "assignment"}),
    "protocols:next": rule(EVERYONE, kwargs=T1),
    "protocols:results": rule(DASH, kwargs=T1),
    "protocols:new_summedits": rule(LEAD, GP),
    "protocols:new_campaign": rule(LEAD, GP, kwargs={"task": "=tofueval-task1"}),
    "protocols:progress": rule(LEAD, kwargs=T1),
    # protocols: expert review
    "protocols:review_queue": rule(REVIEW, kwargs=T1),
    "protocols:review_next": rule(REVIEW, kwargs={**T1, "name": "=decide"}),
    "protocols:review_unit": rule(REVIEW, kwargs=UNIT),
    "protocols:review_decide": rule(REVIEW, P, kwargs=UNIT),
    "protocols:review_check": rule(REVIEW, P, kwargs=UNIT),
    "protocols:review_types": rule(REVIEW, P, kwargs=UNIT),
    # LLM: endpoints and prompts are global, for staff and leads of any project (the outsider
    # leads "other", so they get in by design)
    "llm:endpoints": rule({"lead", "outsider"}, GP, project_scoped=False),
    "llm:endpoint": rule({"lead", "outsider"}, GP, kwargs={"pk": "endpoint"}, project_scoped=False),
    "llm:prompts": rule({"lead", "outsider"}, project_scoped=False),
    "llm:prompt": rule({"lead", "outsider"}, GP, kwargs={"slug": "=tofueval-summary"}, project_scoped=False),
    "llm:jobs": rule(LEAD, GP),
    "llm:job": rule(LEAD, kwargs={"pk": "job"}),
    "llm:unit": rule(LEAD, kwargs={"pk": "job", "unit_pk": "unit"}),
    "llm:job_cancel": rule(LEAD, P, kwargs={"pk": "job"}),
    "llm:job_resume": rule(LEAD, P, kwargs={"pk": "job"}),
    # API
    "api-token": rule(set(), GP, api=True, public=True, project_scoped=False),
    "api-projects": rule(EVERYONE | {"outsider"}, api=True, project_scoped=False),
    "api-project": rule(EVERYONE, api=True),
    "api-members": rule(EVERYONE, api=True),
    "api-documents": rule(REVIEW, api=True),
    "api-summaries": rule(REVIEW, api=True),
    "api-export": rule(DASH, api=True),
    "api-import": rule(LEAD, P, api=True),
    "api-import-detail": rule(LEAD, api=True, kwargs={"pk": "import_job"}),
    "api-llm-jobs": rule(LEAD, P, api=True),
    "api-llm-job": rule(LEAD, api=True, kwargs={"pk": "job"}),
    "api-agreement": rule(DASH, api=True, kwargs=T1),
}

# Cells where the matrix found a real authorization bug: route -> reason (strict xfail).
KNOWN_BUGS: dict[str, str] = {}


# -- the routes -----------------------------------------------------------------------------------
def walk(patterns, prefix="", namespace=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from walk(p.url_patterns, prefix + str(p.pattern), ns)
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), f"{namespace}{p.name}" if p.name else None, p


def skipped(pattern: str) -> bool:
    return any(pattern.startswith(prefix) for prefix in SKIPPED)


ALL_ROUTES = list(walk(get_resolver().url_patterns))
ROUTES = {name: (pattern, p) for pattern, name, p in ALL_ROUTES if not skipped(pattern)}


def test_every_route_is_in_the_matrix():
    unnamed = [pattern for pattern, name, _ in ALL_ROUTES if name is None and not skipped(pattern)]
    assert not unnamed, f"unnamed routes (name them to put them in the matrix): {unnamed}"
    names = [name for pattern, name, _ in ALL_ROUTES if name and not skipped(pattern)]
    assert len(names) == len(set(names)), f"two routes share a name: {sorted(n for n in names if names.count(n) > 1)}"
    unknown = sorted(set(ROUTES) - set(EXPECTED))
    assert not unknown, f"unknown route: add it to the matrix (EXPECTED in {__file__}): {unknown}"
    stale = sorted(set(EXPECTED) - set(ROUTES))
    assert not stale, f"matrix entries for routes that no longer exist: {stale}"


def test_the_matrix_walks_the_whole_url_tree():
    # a guard against a walker that silently finds nothing
    assert len(ROUTES) >= 50
    assert {"home", "projects:detail", "protocols:review_types", "api-agreement"} <= set(ROUTES)


# -- the world ------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def world(project, other_project, make_user):
    users = {}
    for role in (Role.LEAD, Role.ANNOTATOR, Role.REVIEWER, Role.VIEWER):
        users[str(role)] = make_user(f"m-{role}")
        projects.add_member(project=project, user=users[str(role)], role=role)
    users["outsider"] = make_user("outsider")
    projects.add_member(project=other_project, user=users["outsider"], role=Role.LEAD)

    task1 = Campaign.objects.create(
        project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1, rounds=["pilot", "main"]
    )
    pilot = make_item(task1, project, "pilot-1", "pilot")
    main = make_item(task1, project, "main-1", "main")
    flagged_sentence = sentences(pilot)[0]
    submit_labels(pilot, users["annotator"], inconsistent={flagged_sentence: EXPLANATION})
    assignment = protocol_services.assign(item=main, annotator=users["annotator"], seed=1)

    summedits = Campaign.objects.create(project=project, slug="se", name="SE", protocol=Protocol.SUMMEDITS)
    rating = Campaign.objects.create(project=project, slug="er", name="Rating", protocol=Protocol.EXPLANATION_RATING)
    ambiguity = Campaign.objects.create(project=project, slug="amb", name="Ambiguity", protocol=Protocol.AMBIGUITY)
    spans = Campaign.objects.create(project=project, slug="sp", name="Spans", protocol=Protocol.SPANS)
    rating_item = Item.objects.create(
        campaign=rating,
        key=f"sentence:{flagged_sentence.pk}",
        document=pilot.document,
        topic=pilot.topic,
        sentence=flagged_sentence,
    )
    rating_item.summaries.set(pilot.summaries.all())
    rating_assignment = Assignment.objects.create(item=rating_item, annotator=users["reviewer"])

    import_job = ImportJob.objects.create(
        project=project, created_by=users["lead"], format="jsonl", status=ImportJob.Status.DONE
    )
    endpoint = Endpoint.objects.create(name="offline-matrix", kind=Endpoint.Kind.OFFLINE)
    prompt = Prompt.objects.filter(slug="tofueval-summary").order_by("-version").first()
    job = Job.objects.create(
        project=project,
        kind=Job.Kind.SUMMARIES,
        endpoint=endpoint,
        prompt=prompt,
        status=Job.Status.DONE,
        created_by=users["lead"],
    )
    unit = Unit.objects.create(job=job, key="u1")

    foreign_doc = Document.objects.create(project=other_project, external_id="foreign-1", text="Elsewhere.")
    make_item(
        Campaign.objects.create(project=other_project, slug="o1", name="O", protocol=Protocol.TOFUEVAL_TASK1),
        other_project,
        "foreign-item",
        "main",
    )
    return {
        "users": users,
        "project": project,
        "other": other_project,
        "ids": {
            "task1": task1.pk,
            "flagged_item": pilot.pk,
            "flagged_sentence": flagged_sentence.pk,
            "assignment": assignment.pk,
            "summedits": summedits.pk,
            "rating": rating.pk,
            "ambiguity": ambiguity.pk,
            "spans": spans.pk,
            "rating_assignment": rating_assignment.pk,
            "import_job": import_job.pk,
            "document": pilot.document.pk,
            "endpoint": endpoint.pk,
            "job": job.pk,
            "unit": unit.pk,
        },
        "foreign_doc": foreign_doc,
    }


def url_for(name: str, world, slug: str) -> str:
    pattern, p = ROUTES[name]
    spec = EXPECTED[name]
    values = {}  # in the pattern's order, which resolve_pattern relies on
    for kwarg in p.pattern.converters:
        source = spec.kwargs.get(kwarg)
        if source is None and kwarg == "slug":
            values[kwarg] = slug
        elif source is None:
            raise AssertionError(f"{name}: no way to fill <{kwarg}> in the matrix")
        elif source.startswith("="):
            values[kwarg] = source[1:]
        else:
            values[kwarg] = world["ids"][source]
    return "/" + resolve_pattern(pattern, values)


def resolve_pattern(pattern: str, values: dict) -> str:
    out = pattern
    for kwarg, value in values.items():
        start = out.index("<")
        while out[start:].split(">")[0].split(":")[-1] != kwarg:
            start = out.index("<", start + 1)
        end = out.index(">", start)
        out = out[:start] + str(value) + out[end + 1 :]
    return out


def client_for(world, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    return client


def request(client, method: str, url: str, api: bool):
    if method == "GET":
        return client.get(url, HTTP_ACCEPT="application/json" if api else "text/html")
    return client.post(url, {})


def refused(response, *, api: bool, anonymous: bool) -> str | None:
    """None when the response is a proper refusal, else what is wrong with it."""
    code = response.status_code
    if anonymous:
        if api:
            return None if code in (401, 403) else f"{code} (anonymous API call must get 401/403)"
        if code == 302 and response["Location"].startswith(LOGIN):
            return None
        return f"{code} {response.get('Location', '')} (anonymous must be sent to {LOGIN})"
    return None if code == 404 else f"{code} (must be 404)"


def route_param(name):
    marks = [pytest.mark.xfail(reason=KNOWN_BUGS[name], strict=True)] if name in KNOWN_BUGS else []
    return pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", [route_param(n) for n in sorted(EXPECTED)])
def test_route(name, world):
    if name not in ROUTES:
        pytest.fail(f"{name} is in the matrix but not in the URL configuration")
    spec = EXPECTED[name]
    demo_url = url_for(name, world, world["project"].slug)
    problems = []
    for role in ROLES:
        client = client_for(world, role)
        for method in spec.methods:
            response = request(client, method, demo_url, spec.api)
            code = response.status_code
            cell = f"{role} {method} {demo_url}: "
            if code >= 500:
                problems.append(cell + f"{code} (server error)")
            elif role == "anonymous" and not spec.public:
                why = refused(response, api=spec.api, anonymous=True)
                if why:
                    problems.append(cell + why)
            elif role in spec.allowed:
                strict = spec.strict_success and (method == "GET" or spec.strict_empty_post)
                if strict and code == 404:
                    problems.append(cell + "404 for a role that is allowed")
            elif spec.public:
                if code < 400:
                    problems.append(cell + f"{code}: unexpected success on a public route")
            else:
                why = refused(response, api=spec.api, anonymous=False)
                if why:
                    problems.append(cell + ("unexpected success " if code < 400 else "") + why)
        # cross-project: under the outsider's own project, demo's object ids must not resolve
        if spec.project_scoped and any(v for k, v in spec.kwargs.items() if not v.startswith("=")):
            cross_url = url_for(name, world, world["other"].slug)
            if role == "outsider":
                for method in spec.methods:
                    code = request(client, method, cross_url, spec.api).status_code
                    if code != 404:
                        problems.append(f"outsider {method} {cross_url} (demo's ids under own project): {code}")
    assert not problems, "\n".join(problems)


# -- the API lists hold no foreign ids ------------------------------------------------------------
def test_project_list_of_the_outsider_holds_only_their_project(world):
    body = client_for(world, "outsider").get("/api/projects/").json()
    rows = body["results"] if isinstance(body, dict) else body
    assert [r["slug"] for r in rows] == ["other"]


@pytest.mark.parametrize("what", ["documents", "summaries"])
def test_lead_lists_only_demo_objects(world, what):
    body = client_for(world, "lead").get(f"/api/projects/demo/{what}/").json()
    rows = body["results"] if isinstance(body, dict) else body
    model = Document if what == "documents" else Summary
    ids = {r.get("id") for r in rows}  # the API's ids are the objects' external ids
    demo_ids = set(model.objects.filter(project=world["project"]).values_list("external_id", flat=True))
    foreign_ids = set(model.objects.filter(project=world["other"]).values_list("external_id", flat=True))
    assert rows, f"no {what} listed"
    assert foreign_ids, "the world must hold foreign objects for this check to mean anything"
    assert None not in ids, f"{what} rows carry no id to check: {rows[0]}"
    assert ids == demo_ids, f"not exactly demo's {what}: {ids ^ demo_ids}"
    assert not ids & foreign_ids
