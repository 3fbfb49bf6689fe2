"""The TofuEval release (amazon-science/tofueval): sentence labels, key points, topic categories.

The release ships no source texts; they come from options["documents"], a JSONL file of
{"doc_id", "turns": ["Speaker 0: ...", ...]}. A document the labels mention but that file
lacks is imported as a placeholder (text_missing) whose summaries are not offered for
annotation until its text arrives.
"""

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from annotation.corpus import text as textlib
from annotation.corpus.formats.base import Parsed, Source
from annotation.corpus.formats.release import (
    add_record,
    csv_rows,
    filled,
    is_str_list,
    json_members,
    literal_list,
    read_documents,
    record,
    release_campaign,
    release_judgment,
)

CAMPAIGN = "release-tofueval"
ERROR_TYPES = {"slug": "tofueval-error-types", "version": 1}
TOPIC_CATEGORIES = ("main", "marginal", "irrelevant")
LABELS = {"yes": "consistent", "no": "inconsistent"}
FACTUAL_COLUMNS = (
    "doc_id",
    "annotation_id",
    "topic",
    "model_name",
    "sent_idx",
    "summ_sent",
    "sent_label",
    "exp",
    "type",
)
COMPLETENESS_COLUMNS = ("doc_id", "annotation_id", "topic", "key_points")
FILE_KINDS = {
    "factual": re.compile(r"^(?P<dataset>.+)_factual_eval_(?P<split>[^_]+)\.csv$"),
    "completeness": re.compile(r"^(?P<dataset>.+)_completeness(_final)?\.csv$"),
    "category": re.compile(r"^(?P<dataset>.+)_topic_category\.json$"),
    "split": re.compile(r"^document_ids_dev_test_split\.json$"),
}


def _key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower())


# The release's names (and spellings seen or likely), compared without case and punctuation.
ERROR_TYPE_CODES = {
    _key(name): code
    for code, names in {
        "extrinsic_information": ["Extrinsic Information", "Extrinsic", "Extrinsic Information Error"],
        "mis_referencing": ["Mis-Referencing", "Misreference", "Mis-Referencing Error"],
        "opinion_as_fact": ["Stating Opinion-as-Fact", "Opinion-as-Fact", "Stating Opinion as Fact Error"],
        "reasoning": ["Reasoning Error", "Reasoning"],
        "tense_aspect_modality": ["Tense/Modality Error", "Tense/Aspect/Modality Error", "Tense/Aspect/Modality"],
        "contradiction": ["Contradiction", "Contradiction Error"],
        "nuanced_meaning_shift": ["Nuanced Meaning Shift", "Nuanced Meaning Shift Error"],
        "other": ["Other", "Others", "Other Error"],
    }.items()
    for name in names
}


@dataclass
class SentenceRow:
    number: int  # sent_idx as released: 1-based
    text: str
    label: str
    explanation: str
    error_types: list[str]
    source: Source


@dataclass
class SummaryRows:
    system: str
    source: Source
    rows: list[SentenceRow] = field(default_factory=list)


@dataclass
class ItemInfo:
    document: str
    topic: str
    dataset: str
    source: Source
    summaries: dict[str, SummaryRows] = field(default_factory=dict)
    key_points: list[str] | None = None


@dataclass
class Release:
    """What the files say, gathered before any record is built."""

    datasets: dict[str, tuple[str, Source]] = field(default_factory=dict)  # doc_id -> (dataset, first mention)
    items: dict[str, ItemInfo] = field(default_factory=dict)
    categories: dict[tuple[str, str], tuple[str, Source]] = field(default_factory=dict)  # (dataset, topic)
    splits: dict[str, str] = field(default_factory=dict)
    texts: dict[str, tuple[list[dict], Source]] | None = None  # None: no documents file


def parse(paths: list[Path], options: dict) -> Parsed:
    parsed, release = Parsed(), Release()
    files = release_files(paths, parsed)
    for path in files["split"]:
        read_splits(path, release, parsed)
    for path in files["category"]:
        read_categories(path, release, parsed)
    for path in files["factual"]:
        read_sentence_labels(path, release, parsed)
    for path in files["completeness"]:
        read_key_points(path, release, parsed)
    if options.get("documents"):
        release.texts = read_documents(Path(options["documents"]), parsed)
    if not parsed.issues:
        build_records(release, files, parsed)
    return parsed


# -- finding and reading the files --------------------------------------------------------------
def release_files(paths: list[Path], parsed: Parsed) -> dict[str, list[Path]]:
    """The release's files by kind; a folder is searched recursively and other files in it ignored."""
    found: dict[str, list[Path]] = {kind: [] for kind in FILE_KINDS}
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            candidates, explicit = sorted(p for p in path.rglob("*") if p.is_file()), False
        elif path.is_file():
            candidates, explicit = [path], True
        else:
            parsed.fail(Source(path.name), "", "no such file or folder")
            continue
        for candidate in candidates:
            kind = file_kind(candidate.name)
            if kind and candidate.resolve() not in seen:
                seen.add(candidate.resolve())
                found[kind].append(candidate)
            elif kind is None and explicit:
                parsed.fail(Source(candidate.name), "", "is not a TofuEval release file name " + _EXPECTED)
    if not found["factual"] and not found["completeness"] and not parsed.issues:
        parsed.fail(Source(paths[0].name if paths else "-"), "", "no TofuEval label files found " + _EXPECTED)
    return found


_EXPECTED = "(<dataset>_factual_eval_<split>.csv, <dataset>_completeness_final.csv, <dataset>_topic_category.json)"


def file_kind(name: str) -> str | None:
    return next((kind for kind, pattern in FILE_KINDS.items() if pattern.match(name)), None)


def dataset_of(path: Path) -> str:
    return FILE_KINDS[file_kind(path.name)].match(path.name).group("dataset")


def read_splits(path: Path, release: Release, parsed: Parsed) -> None:
    """document_ids_dev_test_split.json: {split: {dataset: [doc ids]}}."""
    for line, split, datasets in json_members(path, "{", parsed):
        source = Source(path.name, line)
        if not isinstance(datasets, dict) or not all(is_str_list(ids) for ids in datasets.values()):
            parsed.fail(source, split, "must map each dataset to a list of document ids")
            continue
        for ids in datasets.values():
            for doc_id in ids:
                release.splits.setdefault(doc_id, split)


def read_categories(path: Path, release: Release, parsed: Parsed) -> None:
    """<dataset>_topic_category.json: {topic name: main | marginal | irrelevant}."""
    dataset = dataset_of(path)
    for line, topic, value in json_members(path, "{", parsed):
        source = Source(path.name, line)
        category = value.strip().lower() if isinstance(value, str) else None
        if category not in TOPIC_CATEGORIES:
            parsed.fail(source, topic, f"must be one of {', '.join(TOPIC_CATEGORIES)}; got {value!r}")
            continue
        release.categories[(dataset, topic)] = (category, source)


def read_sentence_labels(path: Path, release: Release, parsed: Parsed) -> None:
    dataset = dataset_of(path)
    for line, row in csv_rows(path, FACTUAL_COLUMNS, parsed):
        source = Source(path.name, line)
        sentence = sentence_row(row, source, parsed)
        if sentence is None or not filled(row, ("doc_id", "annotation_id", "topic", "model_name"), source, parsed):
            continue
        item = item_info(row, dataset, source, release)
        summary_id = f"{item.document}/{row['annotation_id'].strip()}/{item.topic}/{row['model_name'].strip()}"
        summary = item.summaries.setdefault(summary_id, SummaryRows(system=row["model_name"].strip(), source=source))
        summary.rows.append(sentence)


def sentence_row(row: dict, source: Source, parsed: Parsed) -> SentenceRow | None:
    number = row["sent_idx"].strip()
    label = LABELS.get(row["sent_label"].strip().lower())
    ok = True
    if not number.isdigit() or int(number) < 1:
        parsed.fail(source, "sent_idx", f"must be a sentence number from 1; got {row['sent_idx']!r}")
        ok = False
    if label is None:
        parsed.fail(source, "sent_label", f"must be 'yes' or 'no'; got {row['sent_label']!r}")
        ok = False
    if not row["summ_sent"].strip():
        parsed.fail(source, "summ_sent", "is empty")
        ok = False
    if not ok:
        return None
    types = error_type_codes(row["type"], source, parsed)
    return SentenceRow(int(number), row["summ_sent"].strip(), label, row["exp"].strip(), types, source)


def error_type_codes(cell: str, source: Source, parsed: Parsed) -> list[str]:
    """The comma-separated `type` cell as taxonomy codes; an unknown name is kept as "other"."""
    codes: list[str] = []
    for name in (n.strip() for n in re.split(r"[,;]", cell)):
        if not name:
            continue
        code = error_type_code(name)
        if code is None:
            parsed.warn(source, "type", f"unknown error type {name!r}; recorded as 'other'")
            code = "other"
        if code not in codes:
            codes.append(code)
    return codes


def error_type_code(name: str) -> str | None:
    key = _key(name)
    close = difflib.get_close_matches(key, ERROR_TYPE_CODES, n=1, cutoff=0.85)
    return ERROR_TYPE_CODES.get(key) or (ERROR_TYPE_CODES[close[0]] if close else None)


def item_info(row: dict, dataset: str, source: Source, release: Release) -> ItemInfo:
    """The (document, annotation, topic) a row belongs to, created on first sight."""
    doc_id, topic = row["doc_id"].strip(), row["topic"].strip()
    key = f"{doc_id}/{row['annotation_id'].strip()}/{topic}"
    release.datasets.setdefault(doc_id, (dataset, source))
    return release.items.setdefault(key, ItemInfo(document=doc_id, topic=topic, dataset=dataset, source=source))


def read_key_points(path: Path, release: Release, parsed: Parsed) -> None:
    dataset = dataset_of(path)
    for line, row in csv_rows(path, COMPLETENESS_COLUMNS, parsed):
        source = Source(path.name, line)
        points = literal_list(row["key_points"], source, "key_points", parsed)
        if points is None or not filled(row, ("doc_id", "annotation_id", "topic"), source, parsed):
            continue
        item = item_info(row, dataset, source, release)
        if item.key_points is not None:
            parsed.fail(source, "key_points", "this document, annotation and topic already have key points")
            continue
        item.key_points = points


def build_records(release: Release, files: dict[str, list[Path]], parsed: Parsed) -> None:
    first_file = (files["factual"] + files["completeness"])[0]
    add_record(release_campaign(CAMPAIGN, "TofuEval release labels", "tofueval_task1"), Source(first_file.name), parsed)
    for doc_id, (dataset, source) in release.datasets.items():
        add_record(document_record(doc_id, dataset, release, source, parsed), source, parsed)
    for item in release.items.values():
        topic = record("topic", document=item.document, name=item.topic, origin="release")
        add_record(topic, item.source, parsed)
    for key, item in release.items.items():
        for summary_id, rows in item.summaries.items():
            summary = summary_record(summary_id, key, item, rows, parsed)
            if summary is not None:
                add_record(summary, rows.source, parsed)
    for key, item in release.items.items():
        add_record(item_record(key, item, release), item.source, parsed)
    warn_uncategorized(release, files, parsed)


def document_record(doc_id: str, dataset: str, release: Release, source: Source, parsed: Parsed) -> dict:
    split = release.splits.get(doc_id, "")
    found = (release.texts or {}).get(doc_id)
    if found is not None:
        turns = found[0]
        return record(
            "document",
            id=doc_id,
            dataset=dataset,
            split=split,
            kind="dialogue",
            turns=turns,
            text=textlib.turns_text(turns),
        )
    count = sum(len(i.summaries) for i in release.items.values() if i.document == doc_id)
    why = "no documents file was given" if release.texts is None else "it is not in the documents file"
    parsed.warn(
        source,
        "doc_id",
        f"document {doc_id!r} has no text ({why}): its {count} summaries will not be offered for annotation",
    )
    return record("document", id=doc_id, dataset=dataset, split=split, kind="dialogue", text_missing=True)


def summary_record(summary_id: str, item_key: str, item: ItemInfo, summary: SummaryRows, parsed: Parsed) -> dict | None:
    rows = sorted(summary.rows, key=lambda r: r.number)
    if not sentence_numbers_ok(rows, summary.source, parsed):
        return None
    texts = [row.text for row in rows]
    text = " ".join(texts)
    sentences = [s.__dict__ for s in textlib.locate_sentences(text, texts)]
    judgments = []
    for i, row in enumerate(rows):
        unit = f"sentence:{i}"
        judgments.append(
            release_judgment(CAMPAIGN, item_key, "consistency", unit, row.label, explanation=row.explanation)
        )
        if row.error_types:
            judgments.append(
                release_judgment(CAMPAIGN, item_key, "error_types", unit, row.error_types, taxonomy=dict(ERROR_TYPES))
            )
    return record(
        "summary",
        id=summary_id,
        document=item.document,
        topic=item.topic,
        system=summary.system,
        origin="release",
        text=text,
        sentences=sentences,
        judgments=judgments,
    )


def sentence_numbers_ok(rows: list[SentenceRow], source: Source, parsed: Parsed) -> bool:
    """sent_idx must run 1..n: a repeated number names its line, a gap names the summary's first."""
    ok, seen = True, {}
    for row in rows:
        if row.number in seen:
            parsed.fail(
                row.source, "sent_idx", f"sentence {row.number} of this summary is also at line {seen[row.number]}"
            )
            ok = False
        seen.setdefault(row.number, row.source.line)
    if ok and [row.number for row in rows] != list(range(1, len(rows) + 1)):
        parsed.fail(source, "sent_idx", f"must run 1..{len(rows)} without gaps; got {sorted(seen)}")
        ok = False
    return ok


def item_record(key: str, item: ItemInfo, release: Release) -> dict:
    judgments = []
    category = release.categories.get((item.dataset, item.topic))
    if category is not None:
        judgments.append(release_judgment(CAMPAIGN, key, "topic_category", "item", category[0]))
    if item.key_points is not None:
        judgments.append(release_judgment(CAMPAIGN, key, "key_points", "item", item.key_points))
    return record(
        "item",
        campaign=CAMPAIGN,
        key=key,
        document=item.document,
        topic=item.topic,
        summaries=sorted(item.summaries),
        judgments=judgments,
    )


def warn_uncategorized(release: Release, files: dict[str, list[Path]], parsed: Parsed) -> None:
    """One note per dataset whose category file lacks some topics (none if there is no such file)."""
    with_file = {dataset_of(path): path for path in files["category"]}
    for dataset, path in with_file.items():
        missing = sorted(
            {i.topic for i in release.items.values() if i.dataset == dataset}
            - {topic for d, topic in release.categories if d == dataset}
        )
        if missing:
            parsed.warn(Source(path.name), "", f"{len(missing)} topic(s) have no category: {', '.join(missing[:5])}")
