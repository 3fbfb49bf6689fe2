"""The platform's own JSONL format: one record per line, `type` says which.

Record order in a file is free (references are resolved over the whole file); the exporter
writes campaigns, documents, topics, summaries, then items. The JSON Schema beside this module
(`attest.schema.json`) documents the same shape; `normalize` is what the importer enforces.
"""

import re
from datetime import UTC, datetime
from pathlib import Path

from django.utils.dateparse import parse_datetime

from annotation.corpus.formats.base import Parsed, Source, iter_json_lines

STR, INT, NUM, BOOL, LIST, OBJ, ANY = (str,), (int,), (int, float), (bool,), (list,), (dict,), None
NULL = (type(None),)


class Range:
    """A rule on a value: a number within [low, high]."""

    def __init__(self, low, high):
        self.low, self.high, self.schema = low, high, {"minimum": low, "maximum": high}

    def __call__(self, value) -> str | None:
        return None if self.low <= value <= self.high else f"must be between {self.low} and {self.high}"


class OneOf:
    """A rule on a value: one of a fixed set of strings."""

    def __init__(self, *values: str):
        self.values, self.schema = values, {"enum": list(values)}

    def __call__(self, value) -> str | None:
        return None if value in self.values else f"must be one of {', '.join(self.values)}; got {value!r}"


class Pattern:
    """A rule on a string: a regular expression searched as JSON Schema's `pattern` is."""

    def __init__(self, pattern: str, meaning: str):
        self.regex, self.meaning, self.schema = re.compile(pattern), meaning, {"pattern": pattern}

    def __call__(self, value) -> str | None:
        return None if self.regex.search(value) else f"must be {self.meaning}; got {value!r}"


POSITIVE = Range(1, 2**31 - 1)
NATURAL = Range(0, 2**31 - 1)
SLUG = Pattern(r"^[-a-zA-Z0-9_]{1,80}$", "letters, digits, hyphens or underscores (at most 80)")
NON_EMPTY = Pattern(r"\S", "non-empty")

TAXONOMY_REF = {"slug": (STR, True, None), "version": (INT, True, None)}
HISTORY = {
    "version": (INT, True, None, POSITIVE),
    "value": (ANY, False, None),
    "explanation": (STR, False, ""),
    "changed_at": ("datetime", False, None),
    "changed_by": (STR + NULL, False, None),
}
JUDGMENT = {
    "campaign": (STR, True, None),
    "item": (STR, True, None),
    "annotator": (STR, True, None),
    "stage": (STR, False, "annotate", NON_EMPTY),
    "dimension": (STR, True, None, NON_EMPTY),
    "unit": (STR, True, None),
    "value": (ANY, False, None),
    "explanation": (STR, False, ""),
    "taxonomy": (("ref",), False, None),
    "version": (INT, False, 1, POSITIVE),
    "created_at": ("datetime", False, None),
    "updated_at": ("datetime", False, None),
    "history": (("list", HISTORY), False, []),
}
ADJUDICATION = {
    "campaign": (STR, True, None),
    "item": (STR, True, None),
    "dimension": (STR, True, None, NON_EMPTY),
    "unit": (STR, True, None),
    "value": (ANY, False, None),
    "note": (STR, False, ""),
    "taxonomy": (("ref",), False, None),
    "decided_by": (STR + NULL, False, None),
    "decided_at": ("datetime", False, None),
    "version": (INT, False, 1, POSITIVE),
}
ASSIGNMENT = {
    "annotator": (STR, True, None),
    "stage": (STR, False, "annotate", NON_EMPTY),
    "status": (STR, False, "submitted", OneOf("pending", "in_progress", "submitted")),
    "shuffle_seed": (INT + NULL, False, None, Range(-(2**63), 2**63 - 1)),
    "summary_order": (LIST, False, []),
    "active_seconds": (NUM, False, 0.0, Range(0, 10**9)),
    "started_at": ("datetime", False, None),
    "submitted_at": ("datetime", False, None),
}
SENTENCE = {
    "index": (INT, True, None, NATURAL),
    "start": (INT, True, None, NATURAL),
    "end": (INT, True, None, NATURAL),
    "text": (STR, True, None),
}
TURN = {"speaker": (STR, False, ""), "text": (STR, True, None)}
SENTENCE_REF = {"summary": (STR, True, None), "index": (INT, True, None, NATURAL)}

SPECS = {
    "campaign": {
        "slug": (STR, True, None, SLUG),
        "name": (STR, False, ""),
        "protocol": (STR, True, None),
        "guidelines": (STR, False, ""),
        "taxonomy": (("ref",), False, None),
        "annotators_per_item": (INT, False, 1, Range(1, 1000)),
        "double_share": (NUM, False, 0.0, Range(0, 1)),
        "rounds": (LIST, False, []),
        "status": (STR, False, "closed", OneOf("draft", "active", "closed")),
        "is_release": (BOOL, False, False),
        "settings": (OBJ, False, {}),
        "created_at": ("datetime", False, None),
    },
    "document": {
        "id": (STR, True, None),
        "dataset": (STR, False, ""),
        "split": (STR, False, ""),
        "kind": (STR, False, "text", OneOf("text", "dialogue")),
        "text": (STR, False, ""),
        "turns": (("list", TURN), False, []),
        "text_missing": (BOOL, False, False),
        "meta": (OBJ, False, {}),
    },
    "topic": {
        "document": (STR, True, None),
        "name": (STR, True, None),
        "origin": (STR, False, "import"),
        "provenance": (OBJ, False, {}),
    },
    "summary": {
        "id": (STR, True, None),
        "document": (STR, True, None),
        "topic": (STR + NULL, False, None),
        "system": (STR, False, ""),
        "origin": (STR, False, "import", OneOf("release", "human", "llm", "baseline", "import")),
        "text": (STR, True, None),
        "sentences": (("list", SENTENCE), False, None),
        "provenance": (OBJ, False, {}),
        "seed": (OBJ + NULL, False, None),
        "edit_of": (STR + NULL, False, None),
        "judgments": (("list", JUDGMENT), False, []),
        "adjudicated": (("list", ADJUDICATION), False, []),
    },
    "item": {
        "campaign": (STR, True, None),
        "key": (STR, True, None),
        "document": (STR + NULL, False, None),
        "topic": (STR + NULL, False, None),
        "sentence": (("obj", SENTENCE_REF), False, None),
        "summaries": (LIST, False, []),
        "round": (STR, False, "main"),
        "gold": (BOOL, False, False),
        "warmup": (BOOL, False, False),
        "assignments": (("list", ASSIGNMENT), False, []),
        "judgments": (("list", JUDGMENT), False, []),
        "adjudicated": (("list", ADJUDICATION), False, []),
    },
}
TYPE_NAMES = {
    STR: "a string",
    INT: "an integer",
    NUM: "a number",
    BOOL: "true or false",
    LIST: "a list",
    OBJ: "an object",
}


def normalize(record: dict, source: Source, parsed: Parsed) -> dict | None:
    """Check a record's shape and fill defaults; report problems as issues naming the field."""
    if not isinstance(record, dict):
        parsed.fail(source, "", "each line must be a JSON object")
        return None
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in SPECS:
        parsed.fail(source, "type", f"must be one of {', '.join(SPECS)}; got {kind!r}")
        return None
    nul = _nul_path(record, "")
    if nul is not None:  # the database stores no NUL in text or JSON; say so here, not as a crash there
        parsed.fail(source, nul, "contains a NUL character (\\u0000), which cannot be stored")
        return None
    out = _check(record, SPECS[kind], "", source, parsed)
    if out is not None:
        out["type"] = kind
    return out


def _nul_path(value, path: str) -> str | None:
    """The field (as `a.b[2]`) of the first string, or key, holding a NUL character.

    A loop, not recursion: what json.loads nested, this must walk without hitting the limit."""
    stack = [(path, value)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str) and "\x00" in value:
            return where
        if isinstance(value, dict):
            if any("\x00" in key for key in value):
                return where or "(a key)"
            stack += [(f"{where}.{key}" if where else key, v) for key, v in reversed(value.items())]
        elif isinstance(value, list):
            stack += [(f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value)))]
    return None


def _datetime(value) -> datetime | None:
    """An ISO 8601 date-time with a zone that also exists in UTC (year 1 to 9999)."""
    try:
        parsed_value = parse_datetime(value) if isinstance(value, str) else None
        if parsed_value is None or parsed_value.tzinfo is None:
            return None
        parsed_value.astimezone(UTC)
    except (ValueError, OverflowError):  # well-formed but impossible: month 13, year 0 in UTC
        return None
    return parsed_value


def _check(obj: dict, spec: dict, prefix: str, source: Source, parsed: Parsed) -> dict | None:
    ok, out = True, {}
    for name, (kind, required, default, *rules) in spec.items():
        path = f"{prefix}{name}"
        if name not in obj or (obj[name] is None and not required):
            if required:
                parsed.fail(source, path, "is required")
                ok = False
            out[name] = default if not isinstance(default, list | dict) else type(default)()
            continue
        value, good = _check_value(obj[name], kind, path, source, parsed)
        problems = [p for rule in rules if good and (p := rule(value))]
        for problem in problems:
            parsed.fail(source, path, problem)
        ok = ok and good and not problems
        out[name] = value
    return out if ok else None


def _check_value(value, kind, path: str, source: Source, parsed: Parsed):
    if kind is ANY:
        return value, True
    if kind == "datetime":
        parsed_value = _datetime(value)
        if parsed_value is None:
            parsed.fail(source, path, "must be an ISO 8601 date-time with a time zone")
            return None, False
        return parsed_value, True
    if kind == ("ref",):
        if not isinstance(value, dict):
            parsed.fail(source, path, 'must be an object {"slug": ..., "version": ...}')
            return None, False
        checked = _check(value, TAXONOMY_REF, path + ".", source, parsed)
        return checked, checked is not None
    if isinstance(kind, tuple) and kind and kind[0] in ("list", "obj"):
        return _check_nested(value, kind, path, source, parsed)
    if not isinstance(value, kind) or (kind in (INT, NUM) and isinstance(value, bool)):
        expected = TYPE_NAMES.get(kind, " or ".join(t.__name__ for t in kind))
        parsed.fail(source, path, f"must be {expected}; got {type(value).__name__}")
        return None, False
    return value, True


def _check_nested(value, kind, path: str, source: Source, parsed: Parsed):
    container, spec = kind
    if container == "obj":
        if not isinstance(value, dict):
            parsed.fail(source, path, "must be an object")
            return None, False
        checked = _check(value, spec, path + ".", source, parsed)
        return checked, checked is not None
    if not isinstance(value, list):
        parsed.fail(source, path, "must be a list")
        return None, False
    out, ok = [], True
    for i, element in enumerate(value):
        if not isinstance(element, dict):
            parsed.fail(source, f"{path}[{i}]", "must be an object")
            ok = False
            continue
        checked = _check(element, spec, f"{path}[{i}].", source, parsed)
        ok = ok and checked is not None
        out.append(checked)
    return out, ok


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed = Parsed()
    for path in paths:
        for line, obj in iter_json_lines(path, parsed):
            source = Source(path.name, line)
            record = normalize(obj, source, parsed)
            if record is not None:
                parsed.add(record, source)
    return parsed


# -- JSON Schema: generated from SPECS so the documented shape is the enforced one ----------------
SCHEMA_PATH = Path(__file__).with_name("attest.schema.json")
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def _schema_of(kind) -> dict:
    if kind is ANY:
        return {}
    if kind == "datetime":
        return {"type": "string", "format": "date-time"}
    if kind == ("ref",):
        return _object_schema(TAXONOMY_REF)
    if isinstance(kind, tuple) and kind and kind[0] == "list":
        return {"type": "array", "items": _object_schema(kind[1])}
    if isinstance(kind, tuple) and kind and kind[0] == "obj":
        return _object_schema(kind[1])
    types = sorted({"null" if t is type(None) else JSON_TYPES[t] for t in kind})
    if "integer" in types and "number" in types:
        types.remove("integer")
    return {"type": types[0] if len(types) == 1 else types}


def _object_schema(spec: dict) -> dict:
    properties = {}
    for name, (kind, required, _default, *rules) in spec.items():
        schema = _schema_of(kind)
        for rule in rules:
            schema |= rule.schema
        if not required and schema.get("type") not in (None, "null") and "null" not in schema.get("type", []):
            schema = {"anyOf": [schema, {"type": "null"}]}
        properties[name] = schema
    required = sorted(name for name, (_, req, *_) in spec.items() if req)
    return {"type": "object", "properties": properties, "required": required}


def json_schema() -> dict:
    variants = []
    for kind, spec in SPECS.items():
        schema = _object_schema(spec)
        schema["properties"] = {"type": {"const": kind}, **schema["properties"]}
        schema["required"] = ["type", *schema["required"]]
        variants.append({"title": kind, **schema})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Attest JSONL record (one per line)",
        "description": "Generated from annotation/corpus/formats/jsonl.py SPECS; see README 'The JSONL format'.",
        "oneOf": variants,
    }
