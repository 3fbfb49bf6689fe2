"""Labels collected elsewhere: one JSON object per line with `item`, `annotator`, `dimension`,
`value` and optionally `level` (nominal / ordinal / interval), `explanation`, `round`.

They become item-level judgments of a campaign of protocol "labels" (slug: options["campaign"],
else the file name), so agreement is computed for them like for any other dimension. The level
of each dimension is kept in the campaign's settings.
"""

from pathlib import Path

from django.utils.text import slugify

from annotation.corpus.formats.base import Parsed, Source, iter_json_lines
from annotation.corpus.formats.release import add_record, record

LEVELS = ("nominal", "ordinal", "interval")
SCALARS = (str, int, float, bool)


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed = Parsed()
    if not paths:
        return parsed
    slug = options.get("campaign") or slugify(f"labels-{paths[0].stem}")[:80]
    state = {"levels": {}, "items": {}, "seen": {}}
    for path in paths:
        for line, obj in iter_json_lines(path, parsed):
            read_label(obj, Source(path.name, line), slug, state, parsed)
    first = Source(paths[0].name)
    campaign = record(
        "campaign",
        slug=slug,
        name=f"Labels: {slug}",
        protocol="labels",
        status="closed",
        settings={"levels": {dimension: level for dimension, (level, _) in state["levels"].items()}},
    )
    add_record(campaign, first, parsed)
    for key, (round_given, source, judgments) in state["items"].items():
        round_name = round_given[0] if round_given else "main"
        add_record(record("item", campaign=slug, key=key, round=round_name, judgments=judgments), source, parsed)
    return parsed


def read_label(obj, source: Source, slug: str, state: dict, parsed: Parsed) -> None:
    if not isinstance(obj, dict):
        parsed.fail(source, "", "each line must be a JSON object")
        return
    fields = {name: obj.get(name) for name in ("item", "annotator", "dimension")}
    for name, value in fields.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and name == "item":
            fields[name] = value = str(value)  # numeric item ids are common in spreadsheets
        if not isinstance(value, str) or not value.strip():
            parsed.fail(source, name, "is required and must be a non-empty string")
            return
    level = obj.get("level") or "nominal"
    if not checked_value(obj, level, source, parsed) or not consistent_level(
        fields["dimension"], level, source, state, parsed
    ):
        return
    key = (fields["item"], fields["annotator"], fields["dimension"])
    if key in state["seen"]:
        parsed.fail(
            source,
            "item",
            f"{fields['annotator']} labelled {fields['dimension']} of item {fields['item']!r} "
            f"twice; first at line {state['seen'][key]}",
        )
        return
    state["seen"][key] = source.line
    add_to_item(obj, fields, source, slug, state, parsed)


def checked_value(obj: dict, level: str, source: Source, parsed: Parsed) -> bool:
    if level not in LEVELS:
        parsed.fail(source, "level", f"must be one of {', '.join(LEVELS)}; got {level!r}")
        return False
    value = obj.get("value")
    if value is None or not isinstance(value, SCALARS):
        parsed.fail(source, "value", "is required and must be a string, number or true/false")
        return False
    if level != "nominal" and (isinstance(value, bool) or not isinstance(value, int | float)):
        parsed.fail(source, "value", f"must be a number for the {level} level; got {value!r}")
        return False
    for name in ("explanation", "round"):
        if obj.get(name) is not None and not isinstance(obj[name], str):
            parsed.fail(source, name, "must be a string")
            return False
    return True


def consistent_level(dimension: str, level: str, source: Source, state: dict, parsed: Parsed) -> bool:
    known = state["levels"].setdefault(dimension, (level, source.line))
    if known[0] != level:
        parsed.fail(source, "level", f"{dimension} is {known[0]} at line {known[1]}; one level per dimension")
        return False
    return True


def add_to_item(obj: dict, fields: dict, source: Source, slug: str, state: dict, parsed: Parsed) -> None:
    round_name = obj.get("round")
    item = state["items"].setdefault(fields["item"], [None, source, []])
    if round_name and item[0] and item[0][0] != round_name:
        parsed.fail(source, "round", f"item {fields['item']!r} is in round {item[0][0]!r} at line {item[0][1]}")
        return
    if round_name and not item[0]:
        item[0] = (round_name, source.line)
    item[2].append(
        {
            "campaign": slug,
            "item": fields["item"],
            "annotator": fields["annotator"],
            "stage": "annotate",
            "dimension": fields["dimension"],
            "unit": "item",
            "value": obj["value"],
            "explanation": obj.get("explanation") or "",
        }
    )
