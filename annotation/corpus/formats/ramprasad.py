"""The ramprasad release layout (placeholder until its parser lands)."""

from pathlib import Path

from annotation.corpus.formats.base import Parsed, Source


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed = Parsed()
    parsed.fail(Source(paths[0].name if paths else "-"), "", "the ramprasad importer is not written yet")
    return parsed
