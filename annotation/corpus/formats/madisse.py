"""The MADISSE release (amazon-science/madisse): is a summary sentence ambiguous, and how?

Each JSONL line holds a document (its turns), one summary sentence, the final "ambiguity"
label ("0"/"1"), a category and sub-category from the two-level taxonomy, and an explanation.
The release has no document ids: a document is recognised by its turns in options["documents"]
(the TofuEval-style JSONL of {"doc_id", "turns"}), or else named after a hash of its turns.
"""

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from annotation.corpus import text as textlib
from annotation.corpus.formats.base import Parsed, Source, iter_json_lines
from annotation.corpus.formats.release import add_record, read_documents, record, release_campaign, release_judgment

CAMPAIGN = "release-madisse"
TAXONOMY = {"slug": "madisse-ambiguity", "version": 1}
OTHER = "other_evaluability"
AMBIGUOUS = {"1": True, "0": False}


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


# Categories and sub-categories compared as letters only: case, spaces, hyphens and colons vary.
CATEGORY_CODES = {
    "implicitreasoning": "implicit_reasoning",
    "implicitreasoningphenomena": "implicit_reasoning",
    "meaning": "meaning",
    "meaningphenomena": "meaning",
    "context": "context",
    "contextphenomena": "context",
    "otherevaluability": OTHER,
    "otherevaluabilityphenomena": OTHER,
    "other": OTHER,
}
SUB_CATEGORY_CODES = {
    _key(name): code
    for code, names in {
        "implicit_reasoning.deduction": ["Deduction"],
        "implicit_reasoning.commonsense": ["Inference-commonsense", "Commonsense", "Commonsense inference"],
        "implicit_reasoning.value_based": ["Inference-value-based", "Value-based", "Value-based inference"],
        "meaning.synonymy": ["Synonymy"],
        "meaning.hypernymy": ["Hypernymy"],
        "meaning.hyponymy": ["Hyponymy"],
        "meaning.structural": ["Structural ambiguity", "Structural"],
        "meaning.lexical": ["Lexical ambiguity", "Lexical"],
        "meaning.vagueness": ["Vagueness", "Vague"],
        "meaning.non_assertion": ["Non-assertion"],
        "context.decontextualization": ["Decontextualization", "Decontextualisation"],
        "context.conflation": ["Conflation"],
        OTHER: ["Other evaluability"],
    }.items()
    for name in names
}


@dataclass(frozen=True)
class Known:
    """The documents file, indexed by turns so that a release row can find its document id."""

    by_turns: dict[tuple, str]
    turns: dict[str, list[dict]]
    dataset: str


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed = Parsed()
    known = known_documents(options, parsed)
    documents: dict[str, Source] = {}
    summaries: dict[str, tuple[list[dict], Source]] = {}  # summary id -> (judgments, first line)
    if paths:
        add_record(
            release_campaign(CAMPAIGN, "MADISSE release labels", "ambiguity", dict(TAXONOMY)),
            Source(paths[0].name),
            parsed,
        )
    for path in paths:
        for line, obj in iter_json_lines(path, parsed):
            source = Source(path.name, line)
            if valid_row(obj, source, parsed):
                add_row(obj, source, known, documents, summaries, parsed)
    return parsed


def known_documents(options: dict, parsed: Parsed) -> Known:
    if not options.get("documents"):
        return Known({}, {}, "")
    path = Path(options["documents"])
    texts = read_documents(path, parsed)
    turns = {doc_id: found[0] for doc_id, found in texts.items()}
    by_turns = {_turns_key(t): doc_id for doc_id, t in reversed(turns.items())}  # the first id wins
    dataset = path.stem.split("_documents")[0] if "_documents" in path.stem else ""
    return Known(by_turns, turns, dataset)


def _turns_key(turns: list[dict]) -> tuple:
    return tuple((turn["speaker"], turn["text"]) for turn in turns)


# -- one release row --------------------------------------------------------------------------------
def valid_row(obj, source: Source, parsed: Parsed) -> bool:
    if not isinstance(obj, dict):
        parsed.fail(source, "", "each line must be a JSON object")
        return False
    ok = True
    doc = obj.get("doc")
    if not isinstance(doc, list) or not doc or not all(isinstance(turn, str) for turn in doc):
        parsed.fail(source, "doc", "must be a non-empty list of turns (strings)")
        ok = False
    if not isinstance(obj.get("summary"), str) or not obj["summary"].strip():
        parsed.fail(source, "summary", "must be a non-empty string (one summary sentence)")
        ok = False
    if str(obj.get("ambiguity")).strip() not in AMBIGUOUS or isinstance(obj.get("ambiguity"), bool):
        parsed.fail(source, "ambiguity", f'must be "1" (ambiguous) or "0"; got {obj.get("ambiguity")!r}')
        ok = False
    for name in ("category", "sub-category", "explanation"):
        if not isinstance(obj.get(name, ""), str):
            parsed.fail(source, name, f"must be a string; got {type(obj[name]).__name__}")
            ok = False
    return ok


def add_row(obj: dict, source: Source, known: Known, documents: dict, summaries: dict, parsed: Parsed) -> None:
    """The row's document (once), its summary sentence and item (once per distinct labels)."""
    turns = [textlib.parse_turn(turn) for turn in obj["doc"]]
    doc_id = known.by_turns.get(_turns_key(turns)) or "madisse-" + _sha1(json.dumps(obj["doc"]))[:12]
    if doc_id not in documents:
        documents[doc_id] = source
        dataset = known.dataset if doc_id in known.turns else ""
        document = record(
            "document", id=doc_id, dataset=dataset, kind="dialogue", turns=turns, text=textlib.turns_text(turns)
        )
        add_record(document, source, parsed)
    sentence = obj["summary"].strip()
    summary_id = f"{doc_id}/s/{_sha1(sentence)[:12]}"
    judgments = row_judgments(obj, summary_id, source, parsed)
    if summary_id in summaries:
        first, first_source = summaries[summary_id]
        if first != judgments:
            parsed.fail(
                source,
                "ambiguity",
                f"this sentence of this document is labelled differently at line {first_source.line}",
            )
        return
    summaries[summary_id] = (judgments, source)
    add_summary(obj, doc_id, summary_id, sentence, judgments, source, parsed)


def add_summary(
    obj: dict, doc_id: str, summary_id: str, sentence: str, judgments: list, source: Source, parsed: Parsed
) -> None:
    provenance = {"source": "madisse", "category": obj.get("category", ""), "sub_category": obj.get("sub-category", "")}
    summary = record(
        "summary",
        id=summary_id,
        document=doc_id,
        text=sentence,
        origin="release",
        sentences=[{"index": 0, "start": 0, "end": len(sentence), "text": sentence}],
        provenance=provenance,
        judgments=judgments,
    )
    add_record(summary, source, parsed)
    item = record(
        "item",
        campaign=CAMPAIGN,
        key=summary_id,
        document=doc_id,
        sentence={"summary": summary_id, "index": 0},
        summaries=[summary_id],
    )
    add_record(item, source, parsed)


def row_judgments(obj: dict, item: str, source: Source, parsed: Parsed) -> list[dict]:
    ambiguous = AMBIGUOUS[str(obj["ambiguity"]).strip()]
    explanation = obj.get("explanation", "").strip()
    judgments = [release_judgment(CAMPAIGN, item, "ambiguous", "sentence:0", ambiguous, explanation=explanation)]
    if ambiguous:
        codes = ambiguity_codes(obj.get("category", ""), obj.get("sub-category", ""), source, parsed)
        judgments.append(
            release_judgment(CAMPAIGN, item, "ambiguity_types", "sentence:0", codes, taxonomy=dict(TAXONOMY))
        )
    return judgments


# -- the taxonomy -------------------------------------------------------------------------------------
def ambiguity_codes(category: str, sub_category: str, source: Source, parsed: Parsed) -> list[str]:
    """Codes for "cat1/cat2" with "sub1/sub2", paired in order; one category may cover several."""
    categories = [CATEGORY_CODES.get(_key(c)) for c in category.split("/")]
    subs = sub_category.split("/")
    codes: list[str] = []
    for i, sub in enumerate(subs):
        own = categories[i] if len(categories) == len(subs) else categories[0] if len(categories) == 1 else None
        code = sub_category_code(sub)
        if code is None:
            code = f"{own}.other" if own and own != OTHER else OTHER
            if _key(sub) not in ("other", "others") and not (own == OTHER and not _key(sub)):
                parsed.warn(
                    source,
                    "sub-category",
                    f"cannot map sub-category {sub!r} of category {category!r}; recorded as {code!r}",
                )
        if code not in codes:
            codes.append(code)
    return codes


def sub_category_code(name: str) -> str | None:
    """Map e.g. "Semantic relations:Synonymy" to meaning.synonymy: the part after a colon names the type."""
    return SUB_CATEGORY_CODES.get(_key(name.rsplit(":", 1)[-1])) or SUB_CATEGORY_CODES.get(_key(name))


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()
