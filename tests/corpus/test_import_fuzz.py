"""Imports under fuzzing: the five formats' samples, mutated at random, either import with
consistent row counts or fail with issues naming file and line and leave the database exactly
as it was; an import that dies half-way leaves nothing behind and its job failed, not running.

The mutations are the ways real files go wrong: bad UTF-8, byte order marks, over-long lines,
duplicated, dropped or swapped lines (duplicate ids), NaN, runaway nesting, truncation at any
byte, and any JSON value (or CSV cell) in any field. tests/corpus/test_jsonl.py and
test_formats_release.py pin one example of each with its exact message; these tests look for
the combinations nobody wrote down.
"""

import csv
import io
import json
import os
import random
import re
import tempfile
from pathlib import Path

import pytest
from django.db import OperationalError, connection, transaction
from django.test import override_settings
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from annotation.corpus import services
from annotation.corpus.formats import jsonl
from annotation.corpus.formats.base import ImportFailed
from annotation.corpus.management.commands.load_demo import DATA
from annotation.corpus.models import (
    Document,
    EditedSummary,
    ImportJob,
    SeedSummary,
    Summary,
    SummarySentence,
    Topic,
)
from annotation.projects.models import Membership, Project
from annotation.protocols.models import Adjudication, Assignment, Campaign, Item, Judgment, JudgmentRevision
from tests.corpus.test_jsonl import edit, records

pytestmark = pytest.mark.django_db

LINE_LIMIT = 16 * 1024  # above every sample line (the longest is ~5.5 kB), far below a "huge" one
SLUG = "fuzz"

# Row counts by the name the loader reports them under; rows it does not count come after.
COUNTED = {
    "projects": Project,
    "campaigns": Campaign,
    "documents": Document,
    "topics": Topic,
    "summaries": Summary,
    "sentences": SummarySentence,
    "items": Item,
    "assignments": Assignment,
    "judgments": Judgment,
    "adjudications": Adjudication,
}
UNCOUNTED = {
    "revisions": JudgmentRevision,
    "seeds": SeedSummary,
    "edits": EditedSummary,
    "memberships": Membership,
    "item_summaries": Item.summaries.through,
}


def row_counts() -> dict[str, int]:
    return {name: model.objects.count() for name, model in (COUNTED | UNCOUNTED).items()}


# -- the samples, trimmed so that one import takes a fraction of a second ----------------------------
def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _tofueval() -> dict[str, bytes]:
    folder = DATA / "tofueval_sample"
    factual = list(csv.reader((folder / "factual_consistency/meetingbank_factual_eval_test.csv").open(newline="")))
    keys = list(dict.fromkeys(tuple(row[:4]) for row in factual[1:]))[:3]
    factual = factual[:1] + [row for row in factual[1:] if tuple(row[:4]) in keys]
    items = {key[:3] for key in keys}
    completeness = list(csv.reader((folder / "completeness/meetingbank_completeness_final.csv").open(newline="")))
    completeness = completeness[:1] + [row for row in completeness[1:] if tuple(row[:3]) in items]
    return {
        "meetingbank_factual_eval_test.csv": _csv(factual),
        "meetingbank_completeness_final.csv": _csv(completeness),
        "meetingbank_topic_category.json": (folder / "topic_category/meetingbank_topic_category.json").read_bytes(),
        "document_ids_dev_test_split.json": (folder / "document_ids_dev_test_split.json").read_bytes(),
    }


def _summedits() -> dict[str, bytes]:
    files = {}
    for path in sorted((DATA / "summedits_sample").glob("*.json")):
        rows = json.loads(path.read_text(encoding="utf-8"))
        seed = next(r["id"] for r in rows if r["id"].endswith("_og")).removesuffix("_og")
        kept = [r for r in rows if r["id"].rpartition("_")[0] == seed][:6]
        files[path.name] = json.dumps(kept, indent=1, ensure_ascii=False).encode()
    return files


def _madisse() -> dict[str, bytes]:
    lines = (DATA / "madisse_sample.jsonl").read_bytes().splitlines(keepends=True)
    return {"madisse_sample.jsonl": b"".join(lines[:6])}


def _jsonl() -> dict[str, bytes]:
    return {"data.jsonl": "".join(json.dumps(r) + "\n" for r in records()).encode()}


def _ramprasad() -> dict[str, bytes]:
    return {"ramprasad_format_example.csv": (DATA / "ramprasad_format_example.csv").read_bytes()}


DOCUMENTS = "meetingbank_documents_sample.jsonl"
SAMPLES = {  # format -> (its files, the documents file it reads beside them, if any)
    "jsonl": (_jsonl, False),
    "tofueval": (_tofueval, True),
    "summedits": (_summedits, False),
    "madisse": (_madisse, True),
    "ramprasad": (_ramprasad, False),
}


def sample(format: str) -> dict[str, bytes]:
    make, with_documents = SAMPLES[format]
    files = make()
    if with_documents:
        files[DOCUMENTS] = (DATA / DOCUMENTS).read_bytes()
    return files


def import_files(format: str, files: dict[str, bytes], folder: Path) -> tuple[dict, list]:
    for name, body in files.items():
        (folder / name).write_bytes(body)
    paths = [folder / name for name in files if name != DOCUMENTS]
    options = {"documents": str(folder / DOCUMENTS)} if DOCUMENTS in files else {}
    return services.import_data(project_slug=SLUG, format=format, paths=paths, options=options)


# -- mutations ------------------------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["", " ", "\x00", "x" * 300, "sentence:0", "summary", "summary/", "item", "1", "0", "yes"])
    | st.sampled_from(["2026-01-01T10:00:00+00:00", "2026-13-45T99:00:00", "0001-01-01T00:00:00+01:00"])
    | st.sampled_from(["release", "A7", "d1", "s1", "i1", "pilot", "tofueval_task1", "consistency"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
BAD_BYTES = st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x00", b"\r", b'"', b","])


def _lines(body: bytes) -> list[bytes]:
    return body.split(b"\n")


def _field_names() -> list[str]:
    names = set()
    for spec in [*jsonl.SPECS.values(), jsonl.JUDGMENT, jsonl.ADJUDICATION, jsonl.ASSIGNMENT, jsonl.HISTORY]:
        names |= set(spec)
    return sorted(names | {"type", "doc", "summary", "ambiguity", "category", "sub-category", "label", "doc_id"})


FIELD_NAMES = _field_names()  # a field the sample leaves out can be given too


def _random_path(draw, node) -> list:
    """A path from the root of a JSON value to one of its members (or a missing field), drawn at random."""
    path = []
    while isinstance(node, dict | list) and node and draw(st.booleans()):
        if isinstance(node, dict):
            key = draw(st.sampled_from(sorted(node)) | st.sampled_from(FIELD_NAMES))
            if key not in node:
                return [*path, key]
        else:
            key = draw(st.integers(0, len(node) - 1))
        path.append(key)
        node = node[key]
    return path


def _replace(root, path: list, value):
    if not path:
        return value
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return root


def mutate_value(draw, name: str, body: bytes) -> bytes:
    """Any JSON value in any field of one record (a CSV file: any text in any cell)."""
    if name.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(body.decode("utf-8"), newline="")))
        row = draw(st.integers(0, len(rows) - 1))
        if rows[row]:
            rows[row][draw(st.integers(0, len(rows[row]) - 1))] = draw(st.text(max_size=30) | st.just("NaN"))
        return _csv(rows)
    if name.endswith(".jsonl"):
        lines = _lines(body)
        candidates = [i for i, line in enumerate(lines) if line.strip()]
        i = draw(st.sampled_from(candidates))
        record = json.loads(lines[i])
        lines[i] = json.dumps(_replace(record, _random_path(draw, record), draw(JSON_VALUES))).encode()
        return b"\n".join(lines)
    whole = json.loads(body)
    return json.dumps(_replace(whole, _random_path(draw, whole), draw(JSON_VALUES)), indent=1).encode()


def mutate_bytes(draw, kind: str, body: bytes) -> bytes:
    lines = _lines(body)
    at = draw(st.integers(0, len(body)))
    line = draw(st.integers(0, max(len(lines) - 1, 0)))
    if kind == "truncate":
        return body[:at]
    if kind == "bad bytes":
        return body[:at] + draw(BAD_BYTES) + body[at:]
    if kind == "byte order mark":
        return b"\xef\xbb\xbf" * draw(st.integers(1, 2)) + body
    if kind == "huge line":
        return b"\n".join(lines[:line] + [b'{"text": "' + b"x" * (LINE_LIMIT + 10) + b'"}'] + lines[line:])
    if kind == "duplicate line":
        return b"\n".join(lines[:line] + [draw(st.sampled_from(lines))] + lines[line:])
    if kind == "drop line":
        return b"\n".join(lines[:line] + lines[line + 1 :])
    if kind == "swap lines":
        other = draw(st.integers(0, len(lines) - 1))
        lines[line], lines[other] = lines[other], lines[line]
        return b"\n".join(lines)
    if kind == "NaN":
        return _replace_token(draw, body, draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"nan"])))
    if kind == "deep nesting":
        depth = draw(st.sampled_from([30, 101, 940, 1000, 100_000]))  # 940: json.loads takes it, saving did not
        return _replace_token(draw, body, b"[" * depth + b"]" * depth)
    raise AssertionError(kind)


def _replace_token(draw, body: bytes, token: bytes) -> bytes:
    """Put `token` where a number (or, failing that, anything after a colon) stood."""
    spots = [m.span() for m in re.finditer(rb"(?<=[:\[,] )-?\d+(\.\d+)?|(?<=[:\[,])-?\d+(\.\d+)?", body)]
    spots = spots or [(m.end(), m.end()) for m in re.finditer(rb":", body)] or [(0, 0)]
    start, end = draw(st.sampled_from(spots))
    return body[:start] + token + body[end:]


BYTE_MUTATIONS = [
    "truncate",
    "bad bytes",
    "byte order mark",
    "huge line",
    "duplicate line",
    "drop line",
    "swap lines",
    "NaN",
    "deep nesting",
]


@st.composite
def mutated(draw, format: str, kinds: list[str]) -> tuple[dict[str, bytes], list[str]]:
    """The format's sample with one to three random mutations, and what was done (for the report)."""
    files, done = sample(format), []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(sorted(files)))
        kind = draw(st.sampled_from(kinds))
        try:
            if kind == "value":
                files[name] = mutate_value(draw, name, files[name])
            else:
                files[name] = mutate_bytes(draw, kind, files[name])
        except (ValueError, UnicodeDecodeError):  # an earlier mutation left nothing to parse: keep it as is
            continue
        done.append(f"{kind} in {name}")
    return files, done


# -- the property ----------------------------------------------------------------------------------
def check_import(format: str, files: dict[str, bytes], *, preload: bool) -> None:
    """Either the rows the import reports are the rows that appeared (and a second run adds none),
    or it fails with issues naming file and line and the database is exactly as before."""
    with tempfile.TemporaryDirectory() as folder, override_settings(IMPORT_MAX_LINE_BYTES=LINE_LIMIT):
        if preload:  # the unmutated sample first: the mutated file then meets rows it may contradict
            clean = Path(folder) / "clean"
            clean.mkdir()
            import_files(format, sample(format), clean)
        before = row_counts()
        try:
            counts, _ = import_files(format, files, Path(folder))
        except ImportFailed as failure:
            assert row_counts() == before, "a failed import left rows behind"
            check_issues(failure, files)
            return
        after = row_counts()
        assert {k: after[k] - before[k] for k in COUNTED} == {k: counts.get(k, 0) for k in COUNTED}
        again, _ = import_files(format, files, Path(folder))
        assert not any(again.values()) and row_counts() == after, f"a second import added {again}"


def check_issues(failure: ImportFailed, files: dict[str, bytes]) -> None:
    assert failure.issues
    for issue in failure.issues:
        text = str(issue)
        assert issue.file in files, text
        assert issue.message.strip() and text.startswith(issue.file), text
        assert "database refused" not in issue.message, f"reached the database unchecked: {text}"
        if issue.line is not None:  # CSV counts a lone CR as a line break too, as editors do
            assert 1 <= issue.line <= len(files[issue.file].splitlines()) + 1, text


FUZZ = settings(
    max_examples=int(os.environ.get("ATTEST_FUZZ_EXAMPLES", "30")),  # more for a deeper search by hand
    print_blob=True,
    deadline=None,
    database=None,  # no .hypothesis folder in the working tree; a failure prints its reproduction
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz(format: str, files: dict[str, bytes], preload: bool) -> None:
    # Each example in a savepoint rolled back at its end: every example starts from the same database.
    with transaction.atomic():
        check_import(format, files, preload=preload)
        transaction.set_rollback(True)


@pytest.mark.parametrize("format", sorted(SAMPLES))
def test_the_unmutated_samples_import(format):
    with tempfile.TemporaryDirectory() as folder:
        counts, _ = import_files(format, sample(format), Path(folder))
    assert counts["summaries"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("format", sorted(SAMPLES))
def test_damaged_files_import_whole_or_fail_with_lines_and_write_nothing(format, db):
    @FUZZ
    @given(case=mutated(format, BYTE_MUTATIONS), preload=st.booleans())
    def run(case, preload):
        files, done = case
        note("mutations: " + "; ".join(done))
        fuzz(format, files, preload)

    run()


@pytest.mark.slow
@pytest.mark.parametrize("format", sorted(SAMPLES))
def test_any_value_in_any_field_imports_whole_or_fails_with_lines(format, db):
    @FUZZ
    @given(case=mutated(format, ["value"]), preload=st.booleans())
    def run(case, preload):
        files, done = case
        note("mutations: " + "; ".join(done))
        fuzz(format, files, preload)

    run()


# -- what the fuzzing found, pinned ------------------------------------------------------------------
def member_in_assignment(rows):
    rows[4]["assignments"][0]["annotator"] = "A1"  # the lead's pseudonym in the preloaded project
    return rows


FOUND = {  # mutation of records() -> (where, message); each crashed the import before its fix
    "type that is a list": (edit("3.type", ["summary"]), "line 4, field 'type'", "must be one of"),
    "NUL in a text": (edit("3.text", "a\x00b"), "line 4, field 'text'", "NUL character"),
    "NUL in a key of meta": (edit("1.meta", {"a\x00": 1}), "line 2, field 'meta'", "NUL character"),
    "impossible date": (edit("4.assignments.0.started_at", "2026-13-45T99:00:00"), "started_at", "ISO 8601"),
    "date before year 1 in UTC": (edit("3.judgments.0.created_at", "0001-01-01T00:00:00+01:00"), "created_at", "ISO"),
    "system longer than its column": (edit("3.system", "m" * 201), "line 4, field 'system'", "at most 200"),
    "topic origin longer than its column": (edit("2.origin", "o" * 33), "line 3, field 'origin'", "at most 32"),
    "empty annotator": (edit("3.judgments.1.annotator", ""), "judgments[1].annotator", "is empty"),
    "long unit suffix": (edit("3.judgments.1.unit", "summary/" + "s" * 200), "judgments[1].unit", "longer than"),
    "list in summary_order": (edit("4.assignments.0.summary_order", [["s1"]]), None, None),
    "member's pseudonym on an assignment": (member_in_assignment, "assignments[0].annotator", "pseudonym of a member"),
}


@pytest.mark.parametrize("case", sorted(FOUND))
def test_what_fuzzing_found_is_a_line_numbered_issue(case, make_user, tmp_path):
    from annotation.projects import services as projects
    from annotation.projects.models import Role

    project = Project.objects.create(slug=SLUG, name="Fuzz")
    projects.add_member(project=project, user=make_user("lead-a1"), role=Role.LEAD)
    assert project.memberships.get().pseudonym == "A1"
    mutate, where, message = FOUND[case]
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in mutate(records())), encoding="utf-8")
    before = row_counts()
    if where is None:  # not an error at all: imported, the odd value ignored
        assert services.import_data(project_slug=SLUG, format="jsonl", paths=[path])[0]["summaries"] == 1
        return
    with pytest.raises(ImportFailed) as caught:
        services.import_data(project_slug=SLUG, format="jsonl", paths=[path])
    messages = [str(issue) for issue in caught.value.issues]
    assert any(where in m and message in m and m.startswith("data.jsonl, line") for m in messages), messages
    assert row_counts() == before


@pytest.mark.parametrize("depth", [101, 940])
def test_json_nested_deeper_than_the_limit_is_refused_in_every_reader(depth, tmp_path):
    """940 levels: json.loads accepts them, but saving the value then overflowed the stack."""
    nested = "[" * depth + "]" * depth
    jsonl_file = tmp_path / "data.jsonl"
    jsonl_file.write_text('{"type": "document", "id": "d", "text": "x", "meta": {"a": ' + nested + "}}\n")
    summedits_file = tmp_path / "summedits_x.json"
    summedits_file.write_text('[\n{"id": "a_og", "doc": "d", "summary": "s", "label": 1, "x": ' + nested + "}\n]")
    for format, path, line in [("jsonl", jsonl_file, 1), ("summedits", summedits_file, 2)]:
        with pytest.raises(ImportFailed, match=f"line {line}: JSON is nested too deeply"):
            services.import_data(project_slug=SLUG, format=format, paths=[path])
    assert not Project.objects.filter(slug=SLUG).exists()


# -- an import that dies half-way ------------------------------------------------------------------
class DiesOnWrite:
    """Execute wrapper: the n-th write of the import's transaction raises, as if the server had
    gone away. The job's own status updates, outside that transaction, are not counted."""

    def __init__(self, fail_at: int | None):
        self.fail_at, self.writes = fail_at, 0

    def __call__(self, execute, sql, params, many, context):
        writing = sql.lstrip().split(" ", 1)[0].upper() in {"INSERT", "UPDATE", "DELETE"}
        if writing and context["connection"].in_atomic_block:
            self.writes += 1
            if self.writes == self.fail_at:
                raise OperationalError("simulated: server closed the connection unexpectedly")
        return execute(sql, params, many, context)


def writes_of_import(format: str) -> int:
    with transaction.atomic(), tempfile.TemporaryDirectory() as folder:
        counter = DiesOnWrite(None)
        with connection.execute_wrapper(counter):
            import_files(format, sample(format), Path(folder))
        transaction.set_rollback(True)
    return counter.writes


def queued_job(format: str, lead) -> ImportJob:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-job-"))
    files = sample(format)
    for name, body in files.items():
        (folder / name).write_bytes(body)
    project = Project.objects.get_or_create(slug=SLUG, defaults={"name": "Fuzz"})[0]
    options = {"documents": str(folder / DOCUMENTS)} if DOCUMENTS in files else {}
    paths = [str(folder / name) for name in files if name != DOCUMENTS]
    return ImportJob.objects.create(project=project, created_by=lead, format=format, files=paths, options=options)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("format", sorted(SAMPLES))
def test_an_import_dying_at_any_write_leaves_nothing_and_a_failed_job(format, make_user):
    """Real transactions (no test savepoint around them): the loader's own transaction is all there is."""
    lead = make_user("lead")
    Project.objects.create(slug=SLUG, name="Fuzz")  # as for a job: the project exists
    total = writes_of_import(format)
    assert total > 3
    # Every write would be many imports for the larger samples: the first, the last and a spread between.
    picks = sorted({1, 2, total} | set(random.Random(format).sample(range(1, total + 1), min(total, 6))))
    for fail_at in picks:
        job = queued_job(format, lead)
        before = row_counts()
        with connection.execute_wrapper(DiesOnWrite(fail_at)), pytest.raises(OperationalError):
            services.run_import_job(job_id=job.pk)
        job.refresh_from_db()
        assert row_counts() == before, f"write {fail_at} of {total}: rows were left behind"
        assert job.status == ImportJob.Status.FAILED and job.finished_at is not None
        assert job.errors and "nothing was written" in job.errors[0]["text"]
        assert not Path(job.files[0]).parent.exists(), "the stored upload was not cleaned up"
    job = queued_job(format, lead)
    services.run_import_job(job_id=job.pk)  # and with nothing in the way, the same files import
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE and job.counts["summaries"] > 0


@pytest.mark.django_db(transaction=True)
def test_a_job_left_running_by_a_dead_worker_ends_failed_when_redelivered(make_user):
    """A worker killed outright (OOM, SIGKILL) runs no handler: its transaction is rolled back by
    the database and the task message comes back (acks_late, reject_on_worker_lost). The second
    delivery must end the job with a message, not run it again nor leave it polling forever."""
    from annotation.corpus import tasks

    assert tasks.run_import.acks_late and tasks.run_import.reject_on_worker_lost
    job = queued_job("ramprasad", make_user("lead"))
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)
    before = row_counts()
    services.run_import_job(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and row_counts() == before
    assert "stopped" in job.errors[0]["text"] and "nothing was written" in job.errors[0]["text"]
