"""Strict parsing of model output. Pure: text in, value out, or ParseError with a reason.

LLM output is untrusted text. A parser accepts exactly the shape its prompt asked for and
refuses the rest; the caller keeps the raw output, shows it and counts the unit as failed.
Nothing here ever guesses a label out of a rambling answer.
"""

import re

from annotation.llm import offline

MAX_TOPIC_WORDS = 8
MAX_SUMMARY_WORDS = 50
EDIT_TYPE_CODES = (
    "entity_modification",
    "antonym_swap",
    "hallucinated_fact_insertion",
    "negation_insertion_removal",
    "other",
)
NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+(.+?)\s*$")


class ParseError(ValueError):
    """The output does not have the shape the prompt asked for."""


def numbered_lines(text: str) -> list[str]:
    """Lines "1. ...", "2. ..." in order; any other non-blank line is refused."""
    found = []
    for line in (text or "").strip().splitlines():
        if not line.strip():
            continue
        match = NUMBERED.match(line)
        if not match:
            raise ParseError(f"expected numbered lines, got {clip(line)!r}")
        if int(match.group(1)) != len(found) + 1:
            raise ParseError(f"line numbered {match.group(1)} where {len(found) + 1} was expected")
        found.append(match.group(2).strip().strip('"').strip())
    if not found:
        raise ParseError("no numbered lines in the output")
    return found


def topics(text: str, *, n: int) -> list[str]:
    found = numbered_lines(text)
    if len(found) != n:
        raise ParseError(f"expected {n} topics, got {len(found)}")
    for topic in found:
        words = len(topic.split())
        if not topic or words > MAX_TOPIC_WORDS:
            raise ParseError(f"a topic has {words} words (at most {MAX_TOPIC_WORDS}): {clip(topic)!r}")
    if len({t.casefold() for t in found}) != len(found):
        raise ParseError("the topics repeat")
    return found


def summary(text: str, *, max_words: int = MAX_SUMMARY_WORDS) -> str:
    cleaned = " ".join((text or "").split())
    if cleaned.lower().startswith("summary:"):
        cleaned = cleaned[len("summary:") :].strip()
    if not cleaned:
        raise ParseError("empty summary")
    words = len(cleaned.split())
    if words > max_words:
        raise ParseError(f"the summary has {words} words (fewer than {max_words + 1} were asked for)")
    return cleaned


YES_NO = {"yes": "consistent", "no": "inconsistent"}


def yes_no(text: str) -> str:
    """A bare yes / no (a final period and case are tolerated) -> consistent / inconsistent."""
    word = (text or "").strip().strip(".!").strip().lower()
    if word not in YES_NO:
        raise ParseError(f'expected "yes" or "no", got {clip(text)!r}')
    return YES_NO[word]


def last_line_field(text: str, field: str, allowed: dict[str, str]) -> str:
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        raise ParseError("empty output")
    match = re.fullmatch(rf"{field}:\s*(\w+)\.?", lines[-1], flags=re.IGNORECASE)
    if not match or match.group(1).lower() not in allowed:
        raise ParseError(f'the last line should be "{field}: {" / ".join(allowed)}", got {clip(lines[-1])!r}')
    return allowed[match.group(1).lower()]


def field_text(text: str, field: str) -> str:
    """The text after "Field:" up to the final line (may span lines)."""
    lines = (text or "").strip().splitlines()
    for i, line in enumerate(lines):
        if line.strip().lower().startswith(field.lower() + ":"):
            body = [line.strip()[len(field) + 1 :].strip()] + [part.strip() for part in lines[i + 1 : -1]]
            found = " ".join(part for part in body if part).strip()
            if found:
                return found
    raise ParseError(f'no "{field}:" line')


def judge(text: str, *, explain: bool) -> dict:
    """{"label": consistent|inconsistent, "explanation": str} from a judge's answer."""
    if not explain:
        return {"label": yes_no(text), "explanation": ""}
    return {"label": last_line_field(text, "Answer", YES_NO), "explanation": field_text(text, "Explanation")}


VERDICTS = {"consistent": "consistent", "inconsistent": "inconsistent"}


def debate_turn(text: str) -> dict:
    return {"verdict": last_line_field(text, "Verdict", VERDICTS), "argument": field_text(text, "Argument")}


def verdict(text: str) -> str:
    return last_line_field(text, "Verdict", VERDICTS)


def ambiguity(text: str) -> dict:
    ambiguous = last_line_field(text, "Ambiguous", {"yes": "yes", "no": "no"}) == "yes"
    description = field_text(text, "Description")
    if ambiguous and description.lower().strip(".") == "none":
        raise ParseError("ambiguous, but the description says none")
    return {"ambiguous": ambiguous, "description": "" if not ambiguous else description}


def edits(text: str, *, seed: str, n: int, max_distance: int | None = None) -> tuple[list[str], list[dict]]:
    """The acceptable edits and the refused ones with the reason: each must differ from the
    seed, be minor (bounded word-level edit distance) and not repeat an earlier one."""
    bound = offline.MAX_EDIT_DISTANCE if max_distance is None else max_distance
    accepted, refused, seen = [], [], {" ".join(seed.split()).casefold()}
    for line in numbered_lines(text)[:n]:
        key = " ".join(line.split()).casefold()
        distance = offline.word_edit_distance(seed, line)
        if key in seen:
            refused.append({"text": line, "reason": "same as the seed or an earlier edit"})
        elif distance > bound:
            refused.append({"text": line, "reason": f"not minor: {distance} words changed (at most {bound})"})
        else:
            seen.add(key)
            accepted.append(line)
    return accepted, refused


def edit_types(text: str) -> list[str]:
    codes = [c.strip().strip(".").lower() for c in (text or "").replace("\n", ",").split(",") if c.strip()]
    unknown = [c for c in codes if c not in EDIT_TYPE_CODES]
    if not codes or unknown:
        raise ParseError(f"expected codes from {', '.join(EDIT_TYPE_CODES)}, got {clip(text)!r}")
    return sorted(set(codes))


def clip(text: str, limit: int = 120) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
