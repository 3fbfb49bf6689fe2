"""Word-level diff between a seed summary and its edit, as SummEdits shows it to annotators and LLMs.

``diff`` gives ("equal" | "delete" | "insert", text) chunks that keep the original spacing and
punctuation: joining the equal and delete chunks gives ``a`` back, the equal and insert chunks ``b``.
``to_markup`` renders them as ``<del>..</del><ins>..</ins>`` with the text HTML-escaped.
"""

from __future__ import annotations

import difflib
import html
import re

# A word (letters/digits joined by apostrophes or hyphens) or one punctuation mark, with the
# whitespace after it; leading whitespace is a token of its own. Joining the tokens gives the text.
_TOKEN = re.compile(r"\s+|(?:[^\W_]+(?:['’\-][^\W_]+)*|[^\w\s]|_)\s*")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text or "")


def diff(a: str, b: str) -> list[tuple[str, str]]:
    """Chunks turning ``a`` into ``b``; a replacement is a delete followed by an insert."""
    x, y = tokens(a), tokens(b)
    chunks: list[tuple[str, str]] = []

    def add(op: str, parts: list[str]) -> None:
        text = "".join(parts)
        if not text:
            return
        if chunks and chunks[-1][0] == op:
            chunks[-1] = (op, chunks[-1][1] + text)
        else:
            chunks.append((op, text))

    # Tokens match on their words; the whitespace after a matched word may still differ ("called"
    # at the end of a versus "called " before an inserted word in b).
    matcher = difflib.SequenceMatcher(None, [t.rstrip() for t in x], [t.rstrip() for t in y], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for left, right in zip(x[i1:i2], y[j1:j2], strict=True):
                word = left.rstrip()
                add("equal", [word] if left != right else [left])
                if left != right:
                    add("delete", [left[len(word) :]])
                    add("insert", [right[len(word) :]])
            continue
        add("delete", x[i1:i2])
        add("insert", y[j1:j2])
    return chunks


def to_markup(chunks: list[tuple[str, str]]) -> str:
    """SummEdits-style markup: ``The <del>Gold</del><ins>Silver</ins> plan``, text HTML-escaped.

    Whitespace that ends a changed chunk (and that a delete shares with the insert after it) is
    written after the tags, so that tags hug words. Quotes are left alone (``quote=False``): the
    markup goes into prompts and element text, never into attributes.
    """
    out: list[str] = []
    i = 0
    while i < len(chunks):
        op, text = chunks[i]
        if op == "equal":
            out.append(html.escape(text, quote=False))
            i += 1
            continue
        group = [(op, text)]
        if op == "delete" and i + 1 < len(chunks) and chunks[i + 1][0] == "insert":
            group.append(chunks[i + 1])
        trailing = [t[len(t.rstrip()) :] for _, t in group]
        shared = trailing[0] if len(set(trailing)) == 1 and all(t.strip() for _, t in group) else ""
        for kind, t in group:
            tag = "del" if kind == "delete" else "ins"
            body = t[: len(t) - len(shared)] if shared else t
            out.append(f"<{tag}>{html.escape(body, quote=False)}</{tag}>")
        out.append(shared)
        i += len(group)
    return "".join(out)
