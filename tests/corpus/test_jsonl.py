import json

import pytest
from django.core.management import CommandError, call_command

from annotation.corpus import services
from annotation.corpus.formats.base import ImportFailed
from annotation.corpus.models import Document, Summary, SummarySentence
from annotation.projects.models import Membership, Project
from annotation.protocols.models import Adjudication, Assignment, Judgment, JudgmentRevision

TURNS = [{"speaker": "Ana", "text": "We meet at 4 pm."}, {"speaker": "Ben", "text": "Fine, I bring the tickets."}]
SUMMARY_TEXT = "Ana and Ben meet at 5 pm. Ben brings the tickets."


def records() -> list[dict]:
    history = [{"version": 1, "value": "consistent", "explanation": "", "changed_at": "2026-01-01T10:00:00+00:00"}]
    return [
        {"type": "campaign", "slug": "pilot", "name": "Pilot", "protocol": "tofueval_task1", "rounds": ["pilot-1"]},
        {"type": "document", "id": "d1", "dataset": "toy", "split": "test", "kind": "dialogue", "turns": TURNS},
        {"type": "topic", "document": "d1", "name": "Meeting time"},
        {
            "type": "summary",
            "id": "s1",
            "document": "d1",
            "topic": "Meeting time",
            "system": "model_A",
            "text": SUMMARY_TEXT,
            "judgments": [
                {
                    "campaign": "pilot",
                    "item": "i1",
                    "annotator": "A7",
                    "dimension": "consistency",
                    "unit": "sentence:0",
                    "value": "inconsistent",
                    "explanation": "4 pm, not 5 pm",
                    "version": 2,
                    "history": history,
                },
                {
                    "campaign": "pilot",
                    "item": "i1",
                    "annotator": "A7",
                    "dimension": "relevance",
                    "unit": "summary",
                    "value": 4,
                },
            ],
            "adjudicated": [
                {
                    "campaign": "pilot",
                    "item": "i1",
                    "dimension": "consistency",
                    "unit": "sentence:0",
                    "value": "inconsistent",
                    "note": "kept",
                    "decided_by": "A7",
                },
            ],
        },
        {
            "type": "item",
            "campaign": "pilot",
            "key": "i1",
            "document": "d1",
            "topic": "Meeting time",
            "summaries": ["s1"],
            "round": "pilot-1",
            "assignments": [{"annotator": "A7", "shuffle_seed": 42, "summary_order": ["s1"], "active_seconds": 12.5}],
            "judgments": [
                {
                    "campaign": "pilot",
                    "item": "i1",
                    "annotator": "A7",
                    "dimension": "topic_category",
                    "unit": "item",
                    "value": "main",
                }
            ],
        },
    ]


def write(tmp_path, rows, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run_import(path, slug="toy", format="jsonl"):
    return services.import_data(project_slug=slug, format=format, paths=[path])


def export(slug="toy") -> list[dict]:
    return [json.loads(line) for line in services.export_lines(project=Project.objects.get(slug=slug))]


def failure(path, slug="toy") -> list[str]:
    with pytest.raises(ImportFailed) as caught:
        run_import(path, slug)
    return [str(issue) for issue in caught.value.issues]


@pytest.mark.django_db
def test_import_creates_project_rows_and_sentences_with_exact_offsets(tmp_path):
    counts, warnings = run_import(write(tmp_path, records()))
    assert counts["documents"] == 1 and counts["summaries"] == 1 and counts["judgments"] == 3
    assert warnings == []
    summary = Summary.objects.get(external_id="s1")
    sentences = list(summary.sentences.all())
    assert [s.text for s in sentences] == ["Ana and Ben meet at 5 pm.", "Ben brings the tickets."]
    assert all(summary.text[s.start : s.end] == s.text for s in sentences)
    document = Document.objects.get(external_id="d1")
    assert document.text == "Ana: We meet at 4 pm.\nBen: Fine, I bring the tickets."
    judgment = Judgment.objects.get(dimension="consistency")
    assert judgment.sentence == sentences[0] and judgment.version == 2
    assert JudgmentRevision.objects.get(judgment=judgment).value == "consistent"
    assert Adjudication.objects.get().value == "inconsistent"
    member = Membership.objects.get(pseudonym="A7")
    assert member.is_external and not member.user.is_active and not member.user.has_usable_password()
    assert Assignment.objects.get().shuffle_seed == 42


@pytest.mark.django_db
def test_importing_the_same_file_again_creates_nothing(tmp_path):
    path = write(tmp_path, records())
    run_import(path)
    before = (Document.objects.count(), Summary.objects.count(), Judgment.objects.count(), Assignment.objects.count())
    counts, _ = run_import(path)
    assert not any(counts.values())
    after = (Document.objects.count(), Summary.objects.count(), Judgment.objects.count(), Assignment.objects.count())
    assert before == after


@pytest.mark.django_db
def test_export_import_export_round_trip_is_identical(tmp_path):
    run_import(write(tmp_path, records()))
    first = export()
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in first), encoding="utf-8")
    run_import(path, slug="copy")
    assert export("copy") == first
    kinds = [r["type"] for r in first]
    assert kinds == ["campaign", "document", "topic", "summary", "item"]


@pytest.mark.django_db
def test_a_changed_label_on_reimport_is_a_conflict_not_an_overwrite(tmp_path):
    run_import(write(tmp_path, records()))
    changed = records()
    changed[3]["judgments"][1]["value"] = 2
    messages = failure(write(tmp_path, changed, "changed.jsonl"))
    assert any("already exists with a different value" in m and "changed.jsonl, line 4" in m for m in messages)
    assert Judgment.objects.get(dimension="relevance").value == 4


@pytest.mark.django_db
def test_a_changed_summary_text_is_refused(tmp_path):
    run_import(write(tmp_path, records()))
    changed = records()
    changed[3]["text"] = "Something else entirely."
    messages = failure(write(tmp_path, changed, "changed.jsonl"))
    assert any("line 4, field 'text': summary 's1' already exists with a different text" in m for m in messages)


MALFORMED = {
    "truncated line": (lambda rows: rows[:-1] + ['{"type": "item", "campaign": "pilot"'], "line 5", "not valid JSON"),
    "wrong type": (
        lambda rows: rows[:3] + [rows[3].replace('"system": "model_A"', '"system": 7')] + rows[4:],
        "line 4, field 'system'",
        "must be a string",
    ),
    "duplicate id": (lambda rows: rows[:2] + [rows[1]] + rows[2:], "line 3, field 'id'", "duplicate document 'd1'"),
    "unknown document": (
        lambda rows: rows[:3] + [rows[3].replace('"document": "d1"', '"document": "d9"')] + rows[4:],
        "line 4, field 'document'",
        "unknown document 'd9'",
    ),
    "NaN": (
        lambda rows: rows + ['{"type": "document", "id": "d2", "text": "x", "meta": {"score": NaN}}'],
        "line 6",
        "NaN is not a number JSON allows",
    ),
    "deep nesting": (
        lambda rows: (
            rows + ['{"type": "document", "id": "d3", "text": "x", "meta": ' + "[" * 100000 + "]" * 100000 + "}"]
        ),
        "line 6",
        "nested too deeply",
    ),
    "taxonomy without version": (
        lambda rows: [rows[0].replace('"rounds"', '"taxonomy": {"slug": "tofueval-error-types"}, "rounds"')] + rows[1:],
        "line 1, field 'taxonomy.version'",
        "is required",
    ),
    "unknown record type": (
        lambda rows: rows + ['{"type": "annotator", "id": "x"}'],
        "line 6, field 'type'",
        "must be one of",
    ),
    "sentence index out of range": (
        lambda rows: rows[:3] + [rows[3].replace('"unit": "sentence:0"', '"unit": "sentence:9"', 1)] + rows[4:],
        "line 4, field 'judgments.unit'",
        "has no sentence 9",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_names_the_line_and_writes_nothing(tmp_path, case):
    mutate, where, message = MALFORMED[case]
    lines = mutate([json.dumps(r) for r in records()])
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    messages = failure(path)
    assert any(f"bad.jsonl, {where}" in m and message in m for m in messages), messages
    assert not Project.objects.exists() and not Document.objects.exists() and not Summary.objects.exists()


@pytest.mark.django_db
def test_bad_utf8_is_reported_with_its_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    good = [json.dumps(r).encode() for r in records()]
    path.write_bytes(b"\n".join(good[:2] + [b'{"type": "topic", "document": "d1", "name": "\xff\xfe"}'] + good[3:]))
    messages = failure(path)
    assert any("bad.jsonl, line 3: not valid UTF-8" in m for m in messages), messages
    assert not Document.objects.exists()


@pytest.mark.django_db
def test_an_over_long_line_is_refused_without_reading_it_whole(tmp_path, settings):
    settings.IMPORT_MAX_LINE_BYTES = 1000
    rows = [json.dumps(r) for r in records()]
    rows.insert(1, json.dumps({"type": "document", "id": "big", "text": "x" * 5000}))
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    messages = failure(path)
    assert any("long.jsonl, line 2: line is longer than the limit of 1000 bytes" in m for m in messages)


@pytest.mark.django_db
def test_an_over_large_file_is_refused(tmp_path, settings):
    settings.IMPORT_MAX_BYTES = 100
    assert any("the limit is 100" in m for m in failure(write(tmp_path, records())))


@pytest.mark.django_db
def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + write(tmp_path, records()).read_bytes())
    counts, _ = run_import(path)
    assert counts["summaries"] == 1


@pytest.mark.django_db
def test_sentence_offsets_given_in_the_file_must_match_the_text(tmp_path):
    rows = records()
    rows[3]["sentences"] = [{"index": 0, "start": 0, "end": 10, "text": "not this"}]
    messages = failure(write(tmp_path, rows))
    assert any("field 'sentences[0].text': does not equal the summary text" in m for m in messages)
    assert not SummarySentence.objects.exists()


@pytest.mark.django_db
def test_command_reports_errors_and_exits_non_zero(tmp_path, capsys):
    rows = [json.dumps(r) for r in records()]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(rows[:1] + ["{oops"] + rows[1:]) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_data", str(path), project="toy", format="jsonl")
    assert "bad.jsonl, line 2: not valid JSON" in capsys.readouterr().err


@pytest.mark.django_db
def test_commands_import_then_export_to_a_file(tmp_path, capsys):
    call_command("import_data", str(write(tmp_path, records())), project="toy", format="jsonl")
    assert "1 summaries" in capsys.readouterr().out
    out = tmp_path / "out.jsonl"
    call_command("export_jsonl", project="toy", out=str(out))
    assert [json.loads(line)["type"] for line in out.read_text().splitlines()][0] == "campaign"


def test_bad_project_slug_is_refused(tmp_path):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="lower-case"):
        services.import_data(project_slug="Bad Slug", format="jsonl", paths=[])


def test_committed_json_schema_is_the_one_the_importer_enforces():
    from annotation.corpus.formats import jsonl

    assert json.loads(jsonl.SCHEMA_PATH.read_text()) == jsonl.json_schema(), (
        "regenerate attest.schema.json from jsonl.json_schema()"
    )


@pytest.mark.django_db
def test_every_exported_record_validates_against_the_schema(tmp_path):
    import jsonschema

    from annotation.corpus.formats import jsonl

    run_import(write(tmp_path, records()))
    validator = jsonschema.Draft202012Validator(json.loads(jsonl.SCHEMA_PATH.read_text()))
    for record in export():
        validator.validate(record)


@pytest.mark.django_db
def test_a_later_import_links_new_summaries_to_an_existing_item(tmp_path):
    run_import(write(tmp_path, records()))
    rows = records()
    extra = {"type": "summary", "id": "s2", "document": "d1", "topic": "Meeting time", "text": "They meet."}
    rows[4]["summaries"] = ["s1", "s2"]
    run_import(write(tmp_path, [*rows, extra], "more.jsonl"))
    item = Project.objects.get(slug="toy").campaigns.get().items.get()
    assert sorted(item.summaries.values_list("external_id", flat=True)) == ["s1", "s2"]


@pytest.mark.django_db(transaction=True)
def test_a_stalled_export_download_holds_no_sqlite_write_lock(tmp_path):
    from django.db import connection

    run_import(write(tmp_path, records()))
    lines = services.export_lines(project=Project.objects.get(slug="toy"))
    assert json.loads(next(lines))["type"] == "campaign"
    if connection.vendor == "sqlite":  # the snapshot went to a file; no transaction stays open
        assert not connection.in_atomic_block
    assert len(list(lines)) == 4


def edit(path: str, value):
    """A mutation of records(): set the value at a dotted path like '3.judgments.0.version'."""

    def mutate(rows):
        target = rows
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parents:
            target = target[part]
        target[last] = value
        return rows

    return mutate


def with_empty_item_i2(rows):
    """An item i2 without summary s1, and one of s1's labels claiming to belong to it."""
    rows.append({**rows[4], "key": "i2", "summaries": [], "judgments": [], "assignments": []})
    rows[3]["judgments"][1]["item"] = "i2"
    return rows


BAD_VALUES = {
    "negative annotators": (edit("0.annotators_per_item", -1), "line 1, field 'annotators_per_item'", "between 1"),
    "share above one": (edit("0.double_share", 5), "line 1, field 'double_share'", "between 0 and 1"),
    "slug with spaces": (edit("0.slug", "has space/!"), "line 1, field 'slug'", "letters, digits"),
    "negative version": (edit("3.judgments.0.version", -3), "field 'judgments[0].version'", "between 1"),
    "history versions repeat": (
        edit("3.judgments.0.history", [{"version": 1}, {"version": 1}]),
        "field 'judgments.history'",
        "distinct",
    ),
    "huge seed": (edit("4.assignments.0.shuffle_seed", 10**23), "field 'assignments[0].shuffle_seed'", "between"),
    "unknown status": (edit("4.assignments.0.status", "bogus"), "field 'assignments[0].status'", "must be one of"),
    "empty stage": (edit("4.assignments.0.stage", " "), "field 'assignments[0].stage'", "non-empty"),
    "empty unit part": (edit("3.judgments.1.unit", "summary/"), "field 'judgments.unit'", "empty part"),
    "label of another item": (edit("4.judgments.0.item", "i2"), "line 5, field 'judgments'", "unknown item 'i2'"),
    "summary label for an item without it": (
        with_empty_item_i2,
        "line 4, field 'judgments.item'",
        "does not include summary 's1'",
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(BAD_VALUES))
def test_bad_values_are_reported_not_crashed_on(tmp_path, case):
    mutate, where, message = BAD_VALUES[case]
    messages = failure(write(tmp_path, mutate(records()), "bad.jsonl"))
    assert any(where in m and message in m for m in messages), messages
    assert not Project.objects.exists()


@pytest.mark.django_db
def test_item_labels_must_name_their_own_item(tmp_path):
    rows = records()
    rows.append({**rows[4], "key": "i2", "judgments": [], "assignments": []})
    rows[4]["judgments"][0]["item"] = "i2"
    messages = failure(write(tmp_path, rows))
    assert any("line 5, field 'judgments.item': an item's labels must name that item" in m for m in messages)


@pytest.mark.django_db
def test_a_summary_moved_to_another_system_is_a_conflict(tmp_path):
    run_import(write(tmp_path, records()))
    rows = records()
    rows[3]["system"] = "model_B"
    messages = failure(write(tmp_path, rows, "again.jsonl"))
    assert any("field 'system': summary 's1' already exists with a different system ('model_A')" in m for m in messages)


@pytest.mark.django_db
def test_a_folder_or_a_missing_path_is_an_error_not_a_crash(tmp_path):
    for path, message in [(tmp_path, "is not a file"), (tmp_path / "nope.jsonl", "no such file")]:
        with pytest.raises(ImportFailed, match=message):
            services.import_data(project_slug="toy", format="jsonl", paths=[path])
