"""Helpers the release formats share: CSV and JSON read with line numbers, Python-literal
lists, documents files, and records with every field of their spec."""

import ast
import copy
import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from annotation.corpus import text as textlib
from annotation.corpus.formats import jsonl
from annotation.corpus.formats.base import Parsed, Source, iter_json_lines, read_text, reject_constant, too_deep

RELEASE_ANNOTATOR = "release"


def record(record_type: str, /, **fields) -> dict:
    """A record with every field of its type's spec: the values given, the defaults for the rest."""
    spec = jsonl.SPECS[record_type]
    unknown = set(fields) - set(spec)
    if unknown:
        raise TypeError(f"{record_type} records have no field(s) {sorted(unknown)}")
    return {"type": record_type} | {
        name: fields.get(name, copy.copy(default)) for name, (_, _, default, *_) in spec.items()
    }


def release_campaign(slug: str, name: str, protocol: str, taxonomy: dict | None = None) -> dict:
    return record(
        "campaign", slug=slug, name=name, protocol=protocol, taxonomy=taxonomy, status="closed", is_release=True
    )


def release_judgment(
    campaign: str, item: str, dimension: str, unit: str, value, *, explanation: str = "", taxonomy: dict | None = None
) -> dict:
    """A released label, as a judgment of the pseudonymous annotator "release"."""
    defaults = {name: copy.copy(default) for name, (_, _, default, *_) in jsonl.JUDGMENT.items()}
    return defaults | {
        "campaign": campaign,
        "item": item,
        "annotator": RELEASE_ANNOTATOR,
        "stage": "annotate",
        "dimension": dimension,
        "unit": unit,
        "value": value,
        "explanation": explanation,
        "taxonomy": taxonomy,
    }


def add_record(candidate: dict, source: Source, parsed: Parsed) -> None:
    """Fill defaults exactly as the platform's own JSONL import does, then keep the record."""
    normalized = jsonl.normalize(candidate, source, parsed)
    if normalized is not None:
        parsed.add(normalized, source)


def csv_rows(path: Path, columns: tuple[str, ...], parsed: Parsed) -> Iterator[tuple[int, dict[str, str]]]:
    """(line where the record starts, {column: cell}) for each non-blank record of a CSV file.

    Quoted cells may span lines, so the line is counted from the reader, not the records.
    """
    text = read_text(path, parsed)
    if text is None:
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    header = _csv_header(reader, path, columns, parsed)
    if header is None:
        return
    limit, previous = settings.IMPORT_MAX_LINE_BYTES, reader.line_num
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            parsed.fail(Source(path.name, previous + 1), "", f"not valid CSV: {exc}")
            return
        start, previous = previous + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            parsed.fail(Source(path.name, start), "", f"has {len(cells)} cells; the header has {len(header)}")
        elif sum(len(cell) for cell in cells) > limit:
            parsed.fail(Source(path.name, start), "", f"record is longer than the limit of {limit} bytes")
        else:
            yield start, dict(zip(header, cells, strict=True))


def _csv_header(reader, path: Path, columns: tuple[str, ...], parsed: Parsed) -> list[str] | None:
    try:
        header = [name.strip() for name in next(reader, [])]
    except csv.Error as exc:
        parsed.fail(Source(path.name, 1), "", f"not valid CSV: {exc}")
        return None
    if not header:
        parsed.fail(Source(path.name, 1), "", "the file is empty; expected a header line")
        return None
    missing = [name for name in columns if name not in header]
    for name in missing:
        parsed.fail(Source(path.name, 1), name, "column is missing from the header")
    return None if missing else header


def literal_list(cell: str, source: Source, field_name: str, parsed: Parsed) -> list[str] | None:
    """A cell holding a Python-literal list of strings, like "['a', 'b']"."""
    try:
        value = ast.literal_eval(cell.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = None
    if not is_str_list(value):
        parsed.fail(source, field_name, f"must be a Python list of strings like ['a', 'b']; got {cell[:80]!r}")
        return None
    return value


def json_members(path: Path, opener: str, parsed: Parsed) -> list[tuple[int, str | None, object]]:
    """The members of a whole-file JSON array ("[") or object ("{") with the line each starts on.

    Returns (line, key, value) triples, key None for array elements; on any problem an issue
    names the line and the list stops where the file went wrong.
    """
    text = read_text(path, parsed)
    if text is None:
        return []
    scanner = _JsonScanner(text, path.name, parsed)
    return scanner.members(opener)


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_CLOSERS = {"[": "]", "{": "}"}


class _JsonScanner:
    """Walks one JSON container member by member, counting lines as it goes."""

    decoder = json.JSONDecoder(parse_constant=reject_constant)

    def __init__(self, text: str, name: str, parsed: Parsed):
        self.text, self.name, self.parsed = text, name, parsed
        self.pos, self.line, self.counted = 0, 1, 0

    def line_at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.counted, pos)
        self.counted = pos
        return self.line

    def skip(self) -> str:
        self.pos = _WHITESPACE.match(self.text, self.pos).end()
        return self.text[self.pos : self.pos + 1]

    def fail(self, message: str, line: int | None = None) -> None:
        self.parsed.fail(Source(self.name, line or self.line_at(self.pos)), "", message)

    def members(self, opener: str) -> list[tuple[int, str | None, object]]:
        kind = "an array" if opener == "[" else "an object"
        if self.skip() != opener:
            self.fail(f"the file must hold {kind} in JSON")
            return []
        self.pos += 1
        out: list[tuple[int, str | None, object]] = []
        if self.skip() == _CLOSERS[opener]:
            self.pos += 1
            return out if self.at_end() else []
        while True:
            member = self.member(opener)
            if member is None:
                return []
            out.append(member)
            after = self.skip()
            self.pos += 1
            if after == _CLOSERS[opener]:
                return out if self.at_end() else []
            if after != ",":
                self.fail(f"expected ',' or '{_CLOSERS[opener]}' between members of {kind}")
                return []
            self.skip()

    def member(self, opener: str) -> tuple[int, str | None, object] | None:
        line, key = self.line_at(self.pos), None
        try:
            if opener == "{":
                key = self.key()
                if key is None:
                    return None
            value, self.pos = self.decoder.raw_decode(self.text, self.pos)
            if too_deep(value):
                raise RecursionError
        except json.JSONDecodeError as exc:
            self.fail(f"not valid JSON: {exc.msg}", exc.lineno)
            return None
        except ValueError as exc:
            self.fail(f"not valid JSON: {exc}", line)
            return None
        except RecursionError:
            self.fail("JSON is nested too deeply", line)
            return None
        return line, key, value

    def key(self) -> str | None:
        key, self.pos = self.decoder.raw_decode(self.text, self.pos)
        if not isinstance(key, str) or self.skip() != ":":
            self.fail("expected a quoted key followed by ':'")
            return None
        self.pos += 1
        self.skip()
        return key

    def at_end(self) -> bool:
        if self.skip():
            self.fail("unexpected text after the end of the JSON")
            return False
        return True


def is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def filled(row: dict[str, str], names: tuple[str, ...], source: Source, parsed: Parsed) -> bool:
    empty = [name for name in names if not row[name].strip()]
    for name in empty:
        parsed.fail(source, name, "is empty")
    return not empty


def read_documents(path: Path, parsed: Parsed) -> dict[str, tuple[list[dict], Source]]:
    """The documents file: doc_id -> (turns, where). The same id twice must carry the same turns."""
    texts: dict[str, tuple[list[dict], Source]] = {}
    if not path.is_file():
        parsed.fail(Source(path.name), "documents", "no such documents file")
        return texts
    for line, obj in iter_json_lines(path, parsed):
        source = Source(path.name, line)
        turns = document_turns(obj, source, parsed)
        if turns is None:
            continue
        first = texts.setdefault(obj["doc_id"], (turns, source))
        if first[0] != turns:
            parsed.fail(source, "turns", f"document {obj['doc_id']!r} appears at line {first[1].line} with other turns")
    return texts


def document_turns(obj, source: Source, parsed: Parsed) -> list[dict] | None:
    if not isinstance(obj, dict):
        parsed.fail(source, "", 'each line must be an object {"doc_id": ..., "turns": [...]}')
        return None
    if not isinstance(obj.get("doc_id"), str) or not obj["doc_id"].strip():
        parsed.fail(source, "doc_id", "must be a non-empty string")
        return None
    if not is_str_list(obj.get("turns")) or not obj["turns"]:
        parsed.fail(source, "turns", 'must be a non-empty list of strings like "Speaker 0: text"')
        return None
    return [textlib.parse_turn(turn) for turn in obj["turns"]]


# -- building records -----------------------------------------------------------------------------
