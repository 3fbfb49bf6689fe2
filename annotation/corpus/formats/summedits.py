"""The SummEdits release (salesforce/factualNLG): per domain, seeds and their labelled edits.

Each summedits_<domain>.json is a JSON array of {id, doc, summary, label, original_summary,
edit_types, split}; id "<seed>_og" is the verified seed itself, "<seed>_<n>" its edits.
One item per seed holds the seed and all its edits, as the annotator saw them together.
"""

from dataclasses import dataclass, field
from pathlib import Path

from annotation.corpus.formats.base import Parsed, Source
from annotation.corpus.formats.release import (
    add_record,
    json_members,
    literal_list,
    record,
    release_campaign,
    release_judgment,
)

CAMPAIGN = "release-summedits"
EDIT_TYPES = {"slug": "summedits-edit-types", "version": 1}
EDIT_TYPE_CODES = ("entity_modification", "antonym_swap", "hallucinated_fact_insertion", "negation_insertion_removal")
LABELS = {1: "consistent", 0: "inconsistent"}
SEED_SUFFIX = "_og"


@dataclass
class Row:
    id: str
    doc: str
    summary: str
    label: int
    original_summary: str
    edit_types: list[str]
    split: str
    domain: str
    source: Source


@dataclass
class Domain:
    """One domain's rows: seeds by their _og id, edits in file order, documents by text."""

    seeds: dict[str, Row] = field(default_factory=dict)
    edits: list[Row] = field(default_factory=list)
    documents: dict[str, str] = field(default_factory=dict)  # doc text -> document id


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed = Parsed()
    domains: dict[str, Domain] = {}
    ids: dict[str, Source] = {}
    override = domain_override(paths, options, parsed)
    for path in paths:
        domain = override or domain_of(path)
        for row in read_rows(path, domain, parsed):
            if row.id in ids:
                parsed.fail(
                    row.source, "id", f"duplicate id {row.id!r}; first at {ids[row.id].file}, line {ids[row.id].line}"
                )
                continue
            ids[row.id] = row.source
            bucket = domains.setdefault(domain, Domain())
            if row.id.endswith(SEED_SUFFIX):
                bucket.seeds[row.id] = row
            else:
                bucket.edits.append(row)
    if paths and not parsed.issues:
        add_record(release_campaign(CAMPAIGN, "SummEdits release labels", "summedits"), Source(paths[0].name), parsed)
        for domain, bucket in domains.items():
            build_domain(domain, bucket, parsed)
    return parsed


def domain_override(paths: list[Path], options: dict, parsed: Parsed) -> str:
    dataset = str(options.get("dataset") or "").strip()
    if dataset and len(paths) > 1:
        parsed.warn(Source(paths[0].name), "dataset", "ignored: a domain can only be given for a single file")
        return ""
    return dataset


def domain_of(path: Path) -> str:
    """summedits_<domain>.json -> <domain>; another name is taken whole."""
    return path.stem.removeprefix("summedits_")


# -- reading rows -------------------------------------------------------------------------------
def read_rows(path: Path, domain: str, parsed: Parsed) -> list[Row]:
    rows = []
    for line, _, obj in json_members(path, "[", parsed):
        row = make_row(obj, domain, Source(path.name, line), parsed)
        if row is not None:
            rows.append(row)
    return rows


def make_row(obj, domain: str, source: Source, parsed: Parsed) -> Row | None:
    if not isinstance(obj, dict):
        parsed.fail(source, "", "each element must be an object")
        return None
    ok = all([_text(obj, name, source, parsed) for name in ("id", "doc", "summary")])
    label = row_label(obj.get("label"), source, parsed)
    edit_types = edit_type_codes(obj.get("edit_types"), source, parsed)
    original = obj.get("original_summary", "")
    if not isinstance(original, str):
        parsed.fail(source, "original_summary", f"must be a string; got {type(original).__name__}")
        ok = False
    split = obj.get("split") or ""
    if not isinstance(split, str):
        parsed.fail(source, "split", f"must be a string; got {type(split).__name__}")
        ok = False
    if not ok or label is None or edit_types is None:
        return None
    return Row(obj["id"], obj["doc"], obj["summary"], label, original, edit_types, split, domain, source)


def _text(obj: dict, name: str, source: Source, parsed: Parsed) -> bool:
    value = obj.get(name)
    if not isinstance(value, str) or not value.strip():
        what = "is missing" if name not in obj else f"must be a non-empty string; got {value!r:.40}"
        parsed.fail(source, name, what)
        return False
    return True


def row_label(value, source: Source, parsed: Parsed) -> int | None:
    """1 (consistent) or 0 (inconsistent), as a number or a string."""
    if isinstance(value, bool) or str(value).strip() not in ("0", "1"):
        parsed.fail(source, "label", f"must be 1 (consistent) or 0 (inconsistent); got {value!r}")
        return None
    return int(str(value).strip())


def edit_type_codes(value, source: Source, parsed: Parsed) -> list[str] | None:
    """edit_types: a JSON list, or a Python-literal list in a string (older dumps); empty for none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    if isinstance(value, str):
        value = literal_list(value, source, "edit_types", parsed)
        if value is None:
            return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        parsed.fail(source, "edit_types", f"must be a list of strings; got {value!r:.80}")
        return None
    unknown = [code for code in value if code.strip().lower() not in EDIT_TYPE_CODES]
    if unknown:
        parsed.fail(source, "edit_types", f"unknown edit type(s) {unknown}; expected {', '.join(EDIT_TYPE_CODES)}")
        return None
    return list(dict.fromkeys(code.strip().lower() for code in value))


# -- building records -----------------------------------------------------------------------------
def build_domain(domain: str, bucket: Domain, parsed: Parsed) -> None:
    edits_of: dict[str, list[Row]] = {seed_id: [] for seed_id in bucket.seeds}
    for edit in bucket.edits:
        seed = seed_of(edit, bucket, parsed)
        if seed is not None:
            edits_of[seed.id].append(edit)
    for seed in bucket.seeds.values():
        if seed.doc not in bucket.documents:
            bucket.documents[seed.doc] = f"summedits-{domain}-{seed.id.removesuffix(SEED_SUFFIX)}"
            document = record(
                "document", id=bucket.documents[seed.doc], dataset=domain, split=seed.split, kind="text", text=seed.doc
            )
            add_record(document, seed.source, parsed)
    for seed in bucket.seeds.values():
        build_seed(seed, edits_of[seed.id], bucket.documents[seed.doc], parsed)


def seed_of(edit: Row, bucket: Domain, parsed: Parsed) -> Row | None:
    """The seed row of an edit, which must exist and agree with the edit on document and summary."""
    stem, sep, _ = edit.id.rpartition("_")
    seed = bucket.seeds.get(stem + SEED_SUFFIX) if sep else None
    if seed is None:
        parsed.fail(edit.source, "id", f"edit {edit.id!r} has no seed row {stem + SEED_SUFFIX!r} in this domain")
    elif edit.original_summary != seed.summary:
        parsed.fail(edit.source, "original_summary", f"differs from the summary of its seed {seed.id!r}")
    elif edit.doc != seed.doc:
        parsed.fail(edit.source, "doc", f"differs from the document of its seed {seed.id!r}")
    else:
        return seed
    return None


def build_seed(seed: Row, edits: list[Row], document: str, parsed: Parsed) -> None:
    """The seed summary, its edits, and the one item that holds them."""
    seed_label = release_judgment(CAMPAIGN, seed.id, "seed_consistent", "summary", seed.label == 1)
    summary = record(
        "summary",
        id=seed.id,
        document=document,
        text=seed.summary,
        origin="release",
        seed={"domain": seed.domain, "query": ""},
        judgments=[seed_label],
    )
    add_record(summary, seed.source, parsed)
    for edit in edits:
        edited = record(
            "summary",
            id=edit.id,
            document=document,
            text=edit.summary,
            origin="release",
            edit_of=seed.id,
            judgments=edit_judgments(edit, seed.id),
        )
        add_record(edited, edit.source, parsed)
    item = record(
        "item", campaign=CAMPAIGN, key=seed.id, document=document, summaries=[seed.id] + [edit.id for edit in edits]
    )
    add_record(item, seed.source, parsed)


def edit_judgments(edit: Row, item: str) -> list[dict]:
    judgments = [release_judgment(CAMPAIGN, item, "edit_label", "summary", LABELS[edit.label])]
    if edit.edit_types:
        judgments.append(
            release_judgment(CAMPAIGN, item, "edit_types", "summary", edit.edit_types, taxonomy=dict(EDIT_TYPES))
        )
    return judgments
