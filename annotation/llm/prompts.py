"""Rendering a prompt version with a unit's data. Pure: placeholders are `{{ name }}` only, a
missing value is an error (never an empty hole in a prompt), and values are inserted as text."""

from annotation.llm.models import PLACEHOLDER


class MissingValue(KeyError):
    pass


def render_text(template: str, values: dict) -> str:
    def replace(match):
        name = match.group(1)
        if name not in values or values[name] is None:
            raise MissingValue(f"the prompt needs {{{{ {name} }}}}, which this unit does not have")
        return str(values[name])

    return PLACEHOLDER.sub(replace, template)


def messages(prompt, values: dict) -> list[dict]:
    """The chat messages for one call: an optional system message, then the user message."""
    out = []
    if prompt.system.strip():
        out.append({"role": "system", "content": render_text(prompt.system, values)})
    out.append({"role": "user", "content": render_text(prompt.template, values)})
    return out


# What each kind of prompt can use; a new version using anything else is refused.
AVAILABLE = {
    "topics": {"document", "n"},
    "summary": {"document", "topic"},
    "judge_sentence": {"document", "summary", "claim"},
    "judge_summary": {"document", "summary"},
    "edit_consistent": {"document", "seed", "n"},
    "edit_inconsistent": {"document", "seed", "n"},
    "edit_types": {"diff", "document", "seed", "edit"},
    "summedits_judge": {"document", "summary"},
    "debate_agent": {"stance", "document", "summary", "sentence", "history"},
    "debate_adjudicator": {"document", "summary", "sentence", "history"},
    "ambiguity": {"document", "summary", "sentence"},
    "ambiguity_from_debate": {"document", "summary", "sentence", "history"},
}


def unknown_placeholders(kind: str, *texts: str) -> list[str]:
    used = set()
    for text in texts:
        used |= set(PLACEHOLDER.findall(text or ""))
    return sorted(used - AVAILABLE.get(kind, set()))
