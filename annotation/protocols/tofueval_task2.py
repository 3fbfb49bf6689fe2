"""TofuEval task 2 (Tang et al. 2024, App. F.2): completeness.

The annotator first writes the key points a good summary of the topic must contain (at least
one; add, edit, reorder, remove) and commits them before any summary is shown: key points
written after reading the summaries would be shaped by them. Once committed they are frozen.
Then, for each summary, the annotator ticks the key points it covers, or says it covers none;
completeness = covered / number of key points, computed and stored per summary.

The screen is one form whose field names are the draft's keys: `kp-<k>` (k = 1..n, in order);
per summary `c-<summary>-<k>` (covers key point k) and `none-<summary>`. The server alone sets
`committed` (and `committed_at`): a client cannot unfreeze or skip the key points.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.protocols import services
from annotation.protocols.models import Assignment, Protocol
from annotation.protocols.tofueval import summaries_in_order

MAX_KEY_POINTS = 20
MAX_KEY_POINT_CHARS = 500
SERVER_KEYS = ("committed", "committed_at")


def key_points(draft: dict) -> list[str]:
    """The key points in order, blanks dropped."""
    found = []
    for k in range(1, MAX_KEY_POINTS + 1):
        text = str(draft.get(f"kp-{k}", "")).strip()
        if text:
            found.append(text)
    return found


def is_committed(draft: dict) -> bool:
    return draft.get("committed") == "on"


def coverage_names(summaries: list, n: int) -> set[str]:
    names = set()
    for summary in summaries:
        names.add(f"none-{summary.pk}")
        names |= {f"c-{summary.pk}-{k}" for k in range(1, n + 1)}
    return names


def clean_draft(raw: dict, summaries: list, saved: dict) -> dict:
    """This screen's fields from an untrusted draft. Before the commit: key points only. After
    it: the frozen key points and the commit stamp from the saved draft, ticks from the client."""
    raw = raw or {}
    focus = str(raw.get("_focus", ""))[:100]
    if is_committed(saved):
        points = key_points(saved)
        cleaned = {f"kp-{k}": text for k, text in enumerate(points, 1)}
        cleaned |= {key: saved[key] for key in SERVER_KEYS if key in saved}
        allowed = coverage_names(summaries, len(points))
        cleaned |= {k: "on" for k, v in raw.items() if k in allowed and v in ("on", True)}
    else:
        cleaned = {
            f"kp-{k}": str(raw[f"kp-{k}"])[:MAX_KEY_POINT_CHARS]
            for k in range(1, MAX_KEY_POINTS + 1)
            if raw.get(f"kp-{k}") not in (None, "")
        }
    if focus:
        cleaned["_focus"] = focus
    return cleaned


def covered(draft: dict, summary, n: int) -> list[int]:
    return [k for k in range(1, n + 1) if draft.get(f"c-{summary.pk}-{k}") == "on"]


def check_key_points(draft: dict) -> dict[str, str]:
    points = key_points(draft)
    if not points:
        return {"kp-1": "Write at least one key point before you commit."}
    seen = {}
    for k, text in enumerate(points, 1):
        if text.casefold() in seen:
            return {f"kp-{k}": f"Key point {k} repeats key point {seen[text.casefold()]}."}
        seen[text.casefold()] = k
    return {}


def validate(draft: dict, summaries: list) -> dict[str, str]:
    """Messages by field for everything a submission still lacks (empty when complete)."""
    if not is_committed(draft):
        return {"__all__": "Commit your key points first."}
    n = len(key_points(draft))
    errors = {}
    for summary in summaries:
        ticks = covered(draft, summary, n)
        none = draft.get(f"none-{summary.pk}") == "on"
        if not ticks and not none:
            errors[f"cov-{summary.pk}"] = (
                f"Tick the key points summary {summary.position} covers, or that it covers none of them."
            )
        elif ticks and none:
            errors[f"cov-{summary.pk}"] = (
                f"Summary {summary.position} is marked as covering none of the key points and some of them."
            )
    return errors


@transaction.atomic
def commit_key_points(*, assignment: Assignment) -> Assignment:
    """Freeze the saved key points (renumbered 1..n, blanks dropped); only then are summaries shown."""
    assignment = Assignment.objects.select_for_update().select_related("item__campaign").get(pk=assignment.pk)
    check_protocol(assignment)
    draft = dict(assignment.draft)
    if is_committed(draft):
        return assignment
    errors = check_key_points(draft)
    if errors:
        raise ValidationError(errors)
    points = key_points(draft)
    draft = {k: v for k, v in draft.items() if not k.startswith("kp-")}
    draft |= {f"kp-{k}": text for k, text in enumerate(points, 1)}
    draft |= {"committed": "on", "committed_at": timezone.now().isoformat(), "_focus": ""}
    assignment.draft = draft
    assignment.draft_version += 1
    assignment.save(update_fields=["draft", "draft_version"])
    return assignment


def rearrange(draft: dict, action: str) -> dict:
    """The key point buttons without JavaScript: "up-<k>", "down-<k>" or "remove-<k>" applied
    to an uncommitted draft (blanks dropped, so the list stays numbered 1..n)."""
    verb, _, number = action.partition("-")
    points = key_points(draft)
    k = int(number) if number.isdigit() else 0
    if verb in ("up", "down", "remove") and 1 <= k <= len(points):
        i = k - 1
        if verb == "remove":
            del points[i]
        else:
            j = i - 1 if verb == "up" else i + 1
            if 0 <= j < len(points):
                points[i], points[j] = points[j], points[i]
    rest = {key: value for key, value in draft.items() if not key.startswith("kp-")}
    return rest | {f"kp-{n}": text for n, text in enumerate(points, 1)}


def screen(draft: dict, summaries: list, errors: dict) -> dict:
    """What the template shows, with each field's value and message already looked up."""
    points = (
        key_points(draft)
        if is_committed(draft)
        else [
            str(draft.get(f"kp-{k}", ""))
            for k in range(1, MAX_KEY_POINTS + 1)
            if draft.get(f"kp-{k}") not in (None, "")
        ]
    )
    rows = [
        {"k": k, "name": f"kp-{k}", "text": text, "error": errors.get(f"kp-{k}", "")}
        for k, text in enumerate(points, 1)
    ]
    if not is_committed(draft):
        if len(rows) < MAX_KEY_POINTS:  # room for one more, also without JavaScript
            rows.append(
                {
                    "k": len(rows) + 1,
                    "name": f"kp-{len(rows) + 1}",
                    "text": "",
                    "error": errors.get(f"kp-{len(rows) + 1}", ""),
                }
            )
        return {"committed": False, "key_points": rows, "cards": []}
    cards = []
    for summary in summaries:
        ticks = set(covered(draft, summary, len(points)))
        cards.append(
            {
                "summary": summary,
                "key": f"cov-{summary.pk}",
                "error": errors.get(f"cov-{summary.pk}", ""),
                "none_name": f"none-{summary.pk}",
                "none": draft.get(f"none-{summary.pk}") == "on",
                "options": [
                    {
                        "name": f"c-{summary.pk}-{row['k']}",
                        "k": row["k"],
                        "text": row["text"],
                        "checked": row["k"] in ticks,
                    }
                    for row in rows
                ],
            }
        )
    return {"committed": True, "key_points": rows, "cards": cards}


def check_protocol(assignment: Assignment) -> None:
    if assignment.item.campaign.protocol != Protocol.TOFUEVAL_TASK2:
        raise ValidationError("This assignment is not a TofuEval task 2 item.")


@transaction.atomic
def submit(*, assignment: Assignment, draft: dict, client_token: str, user) -> Assignment:
    """Record the key points, each summary's covered key points and its completeness.

    Idempotent on `client_token`; a later resubmission (a correction of the ticks) updates the
    labels and keeps their earlier values as revisions. The key points themselves stay frozen.
    """
    assignment = Assignment.objects.select_for_update().select_related("item__campaign").get(pk=assignment.pk)
    check_protocol(assignment)
    if client_token and assignment.status == Assignment.Status.SUBMITTED and assignment.client_token == client_token:
        return assignment
    summaries = summaries_in_order(assignment)
    errors = validate(draft, summaries)
    if errors:
        raise ValidationError(errors)
    points = key_points(draft)
    record = {"assignment": assignment, "user": user}
    services.record_judgment(**record, dimension="key_points", value=points)
    for summary in summaries:
        ticks = covered(draft, summary, len(points))
        services.record_judgment(**record, dimension="covered_key_points", summary=summary, value=ticks)
        services.record_judgment(
            **record, dimension="completeness", summary=summary, value=round(len(ticks) / len(points), 4)
        )
    assignment.status, assignment.submitted_at = Assignment.Status.SUBMITTED, timezone.now()
    assignment.client_token = client_token or ""
    assignment.draft = draft
    assignment.save(update_fields=["status", "submitted_at", "client_token", "draft"])
    services.labels_changed(campaign_ids=[assignment.item.campaign_id])
    return assignment
