"""What every import format shares: issues with file/line/field, safe line reading, limits.

Each format module turns its files into records of the platform's own JSONL shape (see
`annotation/corpus/formats/attest.schema.json`); one loader then validates and writes them.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

MAX_ISSUES = 50


@dataclass(frozen=True)
class Issue:
    file: str
    line: int | None
    field: str
    message: str

    def __str__(self) -> str:
        where = self.file + (f", line {self.line}" if self.line else "")
        return f"{where}" + (f", field '{self.field}'" if self.field else "") + f": {self.message}"

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message, "text": str(self)}


class ImportFailed(Exception):
    """Raised with every issue found; nothing has been written."""

    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


@dataclass
class Source:
    """Where a record came from, so the loader's own checks can name the line too."""

    file: str
    line: int | None = None


@dataclass
class Parsed:
    """A format's output: records in the platform's shape, each with its source, and warnings."""

    records: list[tuple[dict, Source]] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    def add(self, record: dict, source: Source) -> None:
        self.records.append((record, source))

    def fail(self, source: Source, field_name: str, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            self.issues.append(Issue(source.file, source.line, field_name, message))

    def warn(self, source: Source, field_name: str, message: str) -> None:
        self.warnings.append(Issue(source.file, source.line, field_name, message))

    def raise_if_failed(self) -> None:
        if self.issues:
            raise ImportFailed(self.issues)


def reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


MAX_DEPTH = 100  # far more than any record needs, far less than Python's recursion limit


def too_deep(value) -> bool:
    """Nested deeper than MAX_DEPTH. json.loads stops near the recursion limit, but a value
    just under it still breaks whatever walks it later from a deeper stack (saving a JSON
    field, exporting), so the limit is ours and well below."""
    stack = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list) and value:
            if depth > MAX_DEPTH:
                return True
            stack += [(child, depth + 1) for child in (value.values() if isinstance(value, dict) else value)]
    return False


def loads(text: str):
    """json.loads that refuses NaN and Infinity, which JSON itself does not have, and nesting
    deeper than MAX_DEPTH (as RecursionError, like the nesting json.loads itself refuses)."""
    value = json.loads(text, parse_constant=reject_constant)
    if too_deep(value):
        raise RecursionError(f"nested more than {MAX_DEPTH} levels deep")
    return value


def check_size(path: Path, parsed: Parsed) -> bool:
    if not path.is_file():
        problem = "is not a file (give the files themselves)" if path.exists() else "no such file"
        parsed.fail(Source(path.name or str(path)), "", problem)
        return False
    size = path.stat().st_size
    if size > settings.IMPORT_MAX_BYTES:
        parsed.fail(Source(path.name), "", f"file is {size} bytes; the limit is {settings.IMPORT_MAX_BYTES}")
        return False
    return True


def read_text(path: Path, parsed: Parsed) -> str | None:
    """A whole file as text (for JSON and CSV formats), with size and UTF-8 checks."""
    if not check_size(path, parsed):
        return None
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        parsed.fail(Source(path.name, line), "", f"not valid UTF-8 (byte {exc.start})")
        return None


def iter_json_lines(path: Path, parsed: Parsed):
    """Yield (line number, object) for each non-blank line of a JSONL file.

    Lines longer than the limit are refused without being read whole; bad UTF-8, bad JSON,
    NaN and runaway nesting become issues naming the line.
    """
    if not check_size(path, parsed):
        return
    limit = settings.IMPORT_MAX_LINE_BYTES
    with path.open("rb") as handle:
        number = 0
        while True:
            raw = handle.readline(limit + 1)
            if not raw:
                break
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                parsed.fail(Source(path.name, number), "", f"line is longer than the limit of {limit} bytes")
                _skip_rest_of_line(handle)
                continue
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                parsed.fail(Source(path.name, number), "", f"not valid UTF-8 (byte {exc.start} of the line)")
                continue
            try:
                yield number, loads(text)
            except RecursionError:
                parsed.fail(Source(path.name, number), "", "JSON is nested too deeply")
            except ValueError as exc:
                parsed.fail(Source(path.name, number), "", f"not valid JSON: {exc}")


def _skip_rest_of_line(handle) -> None:
    while True:
        chunk = handle.readline(1 << 20)
        if not chunk or chunk.endswith(b"\n"):
            return
