"""Stored cross-site scripting: a corpus of payloads and a world that holds them everywhere.

Every payload carries a number N and, when it runs, calls `__xss(N)` (a trap the browser test
defines), `alert(N)` or logs "XSS-N"; every payload that would create an element marks it with
`data-xss`, so the test can also see a live tag that did not (yet) run. The world is the
authorization matrix's (one object of every kind the URLs point at), with every text a person, an
import file or an LLM can write replaced by payloads: short fields get one payload that fits,
long ones get the whole corpus.
"""

import json

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

TEMPLATES = [
    "<script>__xss({n})</script>",
    "<ScRiPt>__xss({n})</sCrIpT>",
    "<scr<script>ipt>__xss({n})</scr</script>ipt>",
    "</script><script>__xss({n})</script>",
    "<img src=x onerror=__xss({n}) data-xss={n}>",
    "<img src=x onerror=alert({n}) data-xss={n}>",
    "<img src=x onerror=console.log('XSS-{n}') data-xss={n}>",
    "<svg onload=__xss({n}) data-xss={n}>",
    "<svg/onload=__xss({n}) data-xss={n}>",
    '"><img src=x onerror=__xss({n}) data-xss={n}>',
    "'><img src=x onerror=__xss({n}) data-xss={n}>",
    '\\"><img src=x onerror=__xss({n}) data-xss={n}>',
    '" autofocus onfocus="__xss({n})" data-xss="{n}',
    "' autofocus onfocus='__xss({n})' data-xss='{n}",
    "javascript:__xss({n})",
    "</textarea><img src=x onerror=__xss({n}) data-xss={n}>",
    "</title><img src=x onerror=__xss({n}) data-xss={n}>",
    "</pre><img src=x onerror=__xss({n}) data-xss={n}>",
    "</code></td></tr></table><img src=x onerror=__xss({n}) data-xss={n}>",
    "</option></select><img src=x onerror=__xss({n}) data-xss={n}>",
    '<iframe srcdoc="<script>parent.__xss({n})</script>" data-xss={n}></iframe>',
    "<details open ontoggle=__xss({n}) data-xss={n}>",
    "<body onload=__xss({n}) data-xss={n}>",
    '<a href="javascript:__xss({n})" data-xss={n}>link {n}</a>',
    '<a href="&#106;avascript:__xss({n})" data-xss={n}>link {n}</a>',
    '<a href="data:text/html,<script>__xss({n})</script>" data-xss={n}>link {n}</a>',
    '<div hx-get="/?xss={n}" hx-trigger="load" data-xss={n}>',
    '<div hx-on:htmx:load="__xss({n})" hx-get="/" hx-trigger="load" data-xss={n}>',
    "<math><style><img src=x onerror=__xss({n}) data-xss={n}></style></math>",
    '<noscript><p title="</noscript><img src=x onerror=__xss({n}) data-xss={n}>">',
    '<object data="javascript:__xss({n})" data-xss={n}></object>',
    '<embed src="javascript:__xss({n})" data-xss={n}>',
    '<base href="//evil.invalid/" data-xss={n}>',
    '<meta http-equiv="refresh" content="0;url=javascript:__xss({n})" data-xss={n}>',
    '<form action="javascript:__xss({n})" data-xss={n}><button>go</button></form>',
    "<input autofocus onfocus=__xss({n}) data-xss={n}>",
    "<select autofocus onfocus=__xss({n}) data-xss={n}></select>",
    "<textarea autofocus onfocus=__xss({n}) data-xss={n}></textarea>",
    "<video><source onerror=__xss({n}) data-xss={n}></video>",
    "<audio src=x onerror=__xss({n}) data-xss={n}>",
    "<style>@import 'javascript:__xss({n})';</style><b data-xss={n}>",
    '<template shadowrootmode="open"><img src=x onerror=__xss({n})></template><b data-xss={n}>',
    "<svg><animate onbegin=__xss({n}) attributeName=x dur=1s data-xss={n}>",
    '<svg><script href="data:,__xss({n})"></script></svg><b data-xss={n}>',
    "<marquee onstart=__xss({n}) data-xss={n}>",
    "<img src=x:x onerror=&#95;&#95;xss({n}) data-xss={n}>",
    '<img srcset=",,,,,x" onerror=__xss({n}) data-xss={n}>',
    "<x contenteditable autofocus onfocus=__xss({n}) data-xss={n}>",
    '<table background="javascript:__xss({n})" data-xss={n}></table>',
    '<!--<img src="--><img src=x onerror=__xss({n}) data-xss={n}>">',
    '<? foo="><img src=x onerror=__xss({n}) data-xss={n}>">',
    "]]><img src=x onerror=__xss({n}) data-xss={n}>",
    "<img src=x onerror=__xss({n}) data-xss={n}",
    "<<img src=x onerror=__xss({n}) data-xss={n}>",
    '<div data-xss={n} style="background:url(javascript:__xss({n}))">',
    "%3Cscript%3E__xss({n})%3C%2Fscript%3E",
    "&lt;script&gt;__xss({n})&lt;/script&gt;",
    "\\u003cscript\\u003e__xss({n})\\u003c/script\\u003e",
    '"-__xss({n})-"',
    "';__xss({n});//",
    '<svg><a xlink:href="javascript:__xss({n})" data-xss={n}><text y=20>x</text></a></svg>',
    '{{"k": "</script><script>__xss({n})</script>"}}',
]
PAYLOADS = [template.format(n=n) for n, template in enumerate(TEMPLATES, 1)]
EVERYTHING = "\n".join(PAYLOADS)


def fitting(limit: int, start: int = 0) -> str:
    """The first payload from `start` on (wrapping around) that fits in `limit` characters."""
    for k in range(len(PAYLOADS)):
        payload = PAYLOADS[(start + k) % len(PAYLOADS)]
        if len(payload) <= limit:
            return payload
    raise AssertionError(f"no payload fits in {limit} characters")


class Rotation:
    """Hands out payloads in turn, so that the short fields between them carry all of them."""

    def __init__(self):
        self.next = 0

    def __call__(self, limit: int = 10_000) -> str:
        payload = fitting(limit, self.next)
        self.next = PAYLOADS.index(payload) + 1
        return payload

    def unique(self, limit: int) -> str:
        """A payload followed by a serial number, for fields unique within their scope."""
        self.serial = getattr(self, "serial", 0) + 1
        return f"{self(limit - 8)} #{self.serial}"


def poison(world) -> dict:
    """Replace every text of the matrix's world by payloads; returns extra ids for the test."""
    from annotation.accounts.models import Invitation
    from annotation.corpus.models import Document, ImportJob, Summary, SummarySentence, Topic
    from annotation.llm.models import Endpoint, Job, Prompt
    from annotation.projects.models import Membership, Project
    from annotation.protocols.models import Adjudication, Assignment, Campaign, Judgment, Taxonomy, TaxonomyLabel

    pick = Rotation()
    for project in Project.objects.all():
        project.name, project.description = pick(200), EVERYTHING
        project.save()
    for membership in Membership.objects.all():
        membership.pseudonym = pick.unique(64)
        membership.save()
    for user in get_user_model().objects.all():
        user.first_name, user.last_name = pick(150), pick(150)
        user.save()
    for document in Document.objects.all():
        turns = [{"speaker": fitting(40, n), "text": payload} for n, payload in enumerate(PAYLOADS)]
        text = "\n".join(f"{t['speaker']}: {t['text']}" for t in turns)
        Document.objects.filter(pk=document.pk).update(
            external_id=pick.unique(255), dataset=pick(100), split=pick(50), turns=turns, text=text, meta={"x": pick()}
        )
    for topic in Topic.objects.all():
        topic.name = pick.unique(500)
        topic.save()
    for summary in Summary.objects.all():
        poison_summary(summary, pick)
    for campaign in Campaign.objects.all():
        campaign.name, campaign.guidelines = pick(200), EVERYTHING
        campaign.save()
    for taxonomy in Taxonomy.objects.all():
        taxonomy.name, taxonomy.description, taxonomy.source = pick(200), EVERYTHING, pick(300)
        taxonomy.save()
    for label in TaxonomyLabel.objects.all():
        label.name, label.definition = pick(200), EVERYTHING
        label.examples = [{"kind": "ambiguous", "text": pick()}, {"kind": "clear", "text": pick()}]
        label.save()
    Judgment.objects.exclude(explanation="").update(explanation=EVERYTHING)
    Adjudication.objects.update(note=EVERYTHING)
    for assignment in Assignment.objects.all():  # drafts come back into the annotation form
        draft = dict(assignment.draft)
        for sentence in SummarySentence.objects.filter(summary__items=assignment.item):
            draft[f"s-{sentence.pk}"], draft[f"e-{sentence.pk}"] = "inconsistent", EVERYTHING
        draft["topic_category"] = pick()
        assignment.draft = draft
        assignment.save()
    for invitation_project in Project.objects.all():
        lead = Membership.objects.filter(project=invitation_project, role="lead").first()
        if lead:
            Invitation.objects.create(
                project=invitation_project,
                email=f'"{pick(40)}"@example.org',
                invited_by=lead.user,
                expires_at="2999-01-01T00:00:00Z",
            )
    issues = [{"file": pick(), "line": 3, "field": pick(), "message": payload} for payload in PAYLOADS]
    ImportJob.objects.update(errors=issues, warnings=issues, options={"documents": pick()})
    Endpoint.objects.update(model=pick(200), base_url="http://127.0.0.1:9/v1/" + pick(400).replace(" ", "%20"))
    for prompt in Prompt.objects.all():
        prompt.name, prompt.system, prompt.source, prompt.note = pick(200), EVERYTHING, pick(300), EVERYTHING
        prompt.template = EVERYTHING + "\n{{ document }}\n{{ topic }}"
        prompt.save()
    Job.objects.update(params={"note": pick()})
    extra = {**poison_llm_units(world, pick), **real_failed_import(world, pick)}
    return extra | poison_fine_grained(world, pick)


def poison_fine_grained(world, pick) -> dict:
    """Ambiguity and span items over the poisoned sentences: the annotator's screens with payload
    drafts, and answers by two other annotators, so the adjudication and statistics pages show
    payload descriptions, span texts and notes."""
    import json

    from annotation.projects import services as projects
    from annotation.projects.models import Role
    from annotation.protocols import ambiguity, spans
    from annotation.protocols.models import Assignment, Campaign, Item

    project, users = world["project"], world["users"]
    others = []
    for n in (2, 3):
        user = get_user_model().objects.create_user(f"m-annotator{n}", first_name=pick(150))
        projects.add_member(project=project, user=user, role=Role.ANNOTATOR)
        others.append(user)
    pilot = Item.objects.get(pk=world["ids"]["flagged_item"])
    summary = pilot.summaries.get()
    first, second = list(summary.sentences.order_by("index"))[:2]

    def item(campaign, key, sentence=None):
        made = Item.objects.create(
            campaign=campaign, key=key, document=pilot.document, topic=pilot.topic, sentence=sentence
        )
        made.summaries.set([summary])
        return made

    amb = Campaign.objects.get(pk=world["ids"]["ambiguity"])
    code = next(iter(ambiguity.leaf_codes(ambiguity.taxonomy_of(amb))))
    answer = {"ambiguous": "yes", "type": code, "description": EVERYTHING}
    decided = item(amb, "amb-answered", first)
    for user in others:
        assignment = Assignment.objects.create(item=decided, annotator=user)
        ambiguity.submit(assignment=assignment, draft=answer, client_token="", user=user)
    mine = Assignment.objects.create(item=item(amb, "amb-open", second), annotator=users["annotator"], draft=answer)

    campaign = Campaign.objects.get(pk=world["ids"]["spans"])
    category = spans.labels_of(spans.taxonomy_of(campaign))[0].code
    marked = {"id": 0, "start": first.start, "end": first.end, "text": first.text, "category": category}
    marked |= {"error_class": "intrinsic", "evidence": [0], "no_evidence": False, "note": EVERYTHING[:2000]}
    draft = {"spans": json.dumps([marked])}
    unit = item(campaign, "spans-1")
    answered = Assignment.objects.create(item=unit, annotator=others[0])
    spans.submit(assignment=answered, draft=spans.clean_draft(draft, answered), client_token="", user=others[0])
    open_spans = Assignment.objects.create(item=unit, annotator=users["annotator"], draft=draft)
    return {"ambiguity_assignment": mine.pk, "spans_assignment": open_spans.pk}


def poison_summary(summary, pick) -> None:
    """A summary made of payload sentences, with offsets that still hold."""
    parts = [pick() for _ in range(4)]
    text = " ".join(parts)
    summary.external_id, summary.system, summary.text = pick.unique(255), pick(200), text
    summary.provenance = {"raw_response": EVERYTHING, "model": pick()}
    summary.save()
    judged = list(summary.sentences.order_by("index"))
    start = 0
    for index, part in enumerate(parts):
        values = {"start": start, "end": start + len(part), "text": part}
        if index < len(judged):  # keep the sentences labels point at
            type(judged[index]).objects.filter(pk=judged[index].pk).update(**values)
        else:
            summary.sentences.create(index=index, **values)
        start += len(part) + 1
    summary.sentences.filter(index__gte=len(parts)).delete()


def poison_llm_units(world, pick) -> dict:
    """Units of every shape the job and unit pages show: LLM output is untrusted text."""
    from annotation.llm.models import Job, Unit

    job = Job.objects.get(pk=world["ids"]["job"])
    Unit.objects.filter(pk=world["ids"]["unit"]).update(
        key=pick.unique(200), status=Unit.Status.DONE, raw_output=EVERYTHING, result={"summary": EVERYTHING}
    )
    shapes = [
        {"topics": [pick(), pick()]},
        {"label": pick(), "explanation": EVERYTHING, "verdicts": [pick(), pick()]},
        {"edits": [pick()], "refused": [{"text": pick(), "reason": pick()}]},
        {"types": [pick(), pick()]},
        {"anything": EVERYTHING},
    ]
    for result in shapes:
        Unit.objects.create(job=job, key=pick.unique(200), status="done", raw_output=EVERYTHING, result=result)
    failed = Unit.objects.create(
        job=job, key=pick.unique(200), status="failed", error=EVERYTHING, raw_output=EVERYTHING
    )
    Unit.objects.create(job=job, key=pick.unique(200), status="running", error=EVERYTHING, attempts=2)
    debate = Job.objects.create(
        project=job.project, kind=Job.Kind.DEBATE, endpoint=job.endpoint, status="done", created_by=job.created_by
    )
    transcript = {
        "debates": [
            {
                "verdict": pick(),
                "stances": [pick(), pick()],
                "stopped": pick(),
                "turns": [{"round": 1, "agent": 0, "verdict": pick(), "argument": EVERYTHING, "raw": pick()}],
                "adjudicators": [{"verdict": pick(), "raw": EVERYTHING}],
            }
        ]
    }
    debate_unit = Unit.objects.create(
        job=debate,
        key=pick.unique(200),
        status="done",
        raw_output=json.dumps(transcript),
        result={"label": pick(), "verdicts": [pick()]},
    )
    return {"failed_unit": failed.pk, "debate_job": debate.pk, "debate_unit": debate_unit.pk}


def real_failed_import(world, pick) -> dict:
    """An upload whose file name and field values are payloads, imported by the real code:
    the job page shows the errors it echoes back."""
    from annotation.corpus import services
    from annotation.corpus.models import ImportJob

    lines = [
        {"type": pick(), "id": pick()},
        {"type": "document", "id": pick(), "kind": pick(), "text": EVERYTHING},
        {"type": "summary", "id": pick(), "document": pick(), "text": EVERYTHING, "origin": pick()},
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines) + "{not json " + pick() + "\n"
    name = pick(200).replace("/", "%2F") + ".jsonl"
    upload = SimpleUploadedFile(name, body.encode(), content_type="application/octet-stream")
    job = services.start_import(
        project=world["project"], user=world["users"]["lead"], format="jsonl", files=[upload], options={}
    )
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and job.errors, f"the import was meant to fail: {job.status}"
    return {"real_import_job": job.pk}
