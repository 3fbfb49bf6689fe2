"""Pure text functions: sentence splitting with exact offsets, dialogue turns, locating spans.

Offsets are Python string indices, i.e. Unicode code points, everywhere in Attest.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

import pysbd

# "Speaker 0: text": the colon must be followed by white space (or end the line), so that a
# time such as "10:30" inside a turn without a speaker is not read as one.
TURN_RE = re.compile(r"^\s*([^:\n]{1,80}?)\s*:(?:\s+|$)(.*)$", re.DOTALL)


@dataclass(frozen=True)
class Sentence:
    index: int
    start: int
    end: int
    text: str


@lru_cache(maxsize=4)
def _segmenter(language: str) -> pysbd.Segmenter:
    return pysbd.Segmenter(language=language, clean=False, char_span=False)


def split_sentences(text: str, language: str = "en") -> list[Sentence]:
    """Split `text` into sentences whose offsets map back exactly: text[start:end] == sentence.

    pysbd finds the boundaries; the offsets are then found by walking the original text, so
    whitespace between sentences is never part of one and nothing is normalised away.
    """
    pieces = _segmenter(language).segment(text) if text.strip() else []
    return locate_sentences(text, [p.strip() for p in pieces if p.strip()])


def locate_sentences(text: str, sentences: list[str]) -> list[Sentence]:
    """Offsets of the given sentences, in order, in `text`; ValueError if one is not there."""
    located, cursor = [], 0
    for index, sentence in enumerate(sentences):
        start = text.find(sentence, cursor)
        if start < 0:
            raise ValueError(
                f"sentence {index + 1} does not occur in the text after offset {cursor}: {sentence[:80]!r}"
            )
        end = start + len(sentence)
        located.append(Sentence(index=index, start=start, end=end, text=sentence))
        cursor = end
    return located


def parse_turn(line: str) -> dict:
    """'Speaker 0: Hello' -> {"speaker": "Speaker 0", "text": "Hello"}; no speaker if none is marked."""
    match = TURN_RE.match(line)
    if match and match.group(1).strip():
        return {"speaker": match.group(1).strip(), "text": match.group(2).strip()}
    return {"speaker": "", "text": line.strip()}


def parse_dialogue(text: str) -> list[dict]:
    """A dialogue written one turn per line ("Name: utterance") as a list of turns."""
    return [parse_turn(line) for line in text.splitlines() if line.strip()]


def turns_text(turns: list[dict]) -> str:
    """The canonical text of a dialogue: one "Speaker: text" line per turn."""
    return "\n".join(f"{t['speaker']}: {t['text']}" if t.get("speaker") else t["text"] for t in turns)


def find_span(text: str, span: str, taken: list[tuple[int, int]] = ()) -> tuple[int, int] | None:
    """The first occurrence of `span` in `text` that overlaps none of the `taken` ranges."""
    if not span:
        return None
    start = text.find(span)
    while start >= 0:
        end = start + len(span)
        if all(end <= a or start >= b for a, b in taken):
            return start, end
        start = text.find(span, start + 1)
    return None


def turns_containing(turns: list[dict], needle: str) -> list[int]:
    """Indices of the turns whose text contains `needle` (case-insensitive)."""
    needle = needle.strip().lower()
    if not needle:
        return []
    return [i for i, turn in enumerate(turns) if needle in turn["text"].lower()]
