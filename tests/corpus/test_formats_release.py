"""The release parsers on their own (no database): the samples give the counts the files hold,
and malformed input becomes issues that name file, line and field."""

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from annotation.corpus.formats import madisse, ramprasad, summedits, tofueval
from annotation.corpus.formats.base import Parsed

HERE = Path(__file__).resolve()


def records(parsed: Parsed, kind: str) -> list[dict]:
    return [r for r, _ in parsed.records if r["type"] == kind]


def judgments(parsed: Parsed, dimension: str) -> list[dict]:
    return [j for r, _ in parsed.records for j in r.get("judgments", []) if j["dimension"] == dimension]


def issues(parsed: Parsed) -> list[tuple]:
    return [(i.file, i.line, i.field) for i in parsed.issues]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- TofuEval ---------------------------------------------------------------------------------------
FACTUAL_HEADER = "doc_id,annotation_id,topic,model_name,sent_idx,summ_sent,sent_label,exp,type\n"


@pytest.fixture
def tofueval_sample(data: Path) -> tuple[list[Path], dict]:
    return [data / "tofueval_sample"], {"documents": data / "meetingbank_documents_sample.jsonl"}


def factual_rows(data: Path) -> list[dict]:
    path = data / "tofueval_sample" / "factual_consistency" / "meetingbank_factual_eval_test.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_tofueval_sample_gives_its_documents_topics_summaries_and_items(tofueval_sample, data):
    parsed = tofueval.parse(*tofueval_sample)
    rows = factual_rows(data)
    assert parsed.issues == [] and parsed.warnings == []
    assert len(records(parsed, "document")) == len({r["doc_id"] for r in rows}) == 2
    assert len(records(parsed, "topic")) == 6
    assert len(records(parsed, "summary")) == len({(r["doc_id"], r["topic"], r["model_name"]) for r in rows}) == 36
    assert len(records(parsed, "item")) == 6
    [campaign] = records(parsed, "campaign")
    assert (campaign["slug"], campaign["is_release"], campaign["status"]) == ("release-tofueval", True, "closed")
    document = records(parsed, "document")[0]
    assert (document["dataset"], document["split"], document["kind"]) == ("meetingbank", "test", "dialogue")
    assert document["turns"][0]["speaker"] == "Speaker 0" and document["text"].startswith("Speaker 0: ")


def test_tofueval_sentence_labels_match_the_csv(tofueval_sample, data):
    parsed = tofueval.parse(*tofueval_sample)
    rows = factual_rows(data)
    labels = Counter(j["value"] for j in judgments(parsed, "consistency"))
    assert labels == {"consistent": 49, "inconsistent": 31}
    assert labels["inconsistent"] == sum(r["sent_label"] == "no" for r in rows)
    assert all(j["annotator"] == "release" and j["stage"] == "annotate" for j in judgments(parsed, "consistency"))
    types = Counter(tuple(j["value"]) for j in judgments(parsed, "error_types"))
    assert types == {("extrinsic_information",): 28, ("nuanced_meaning_shift",): 2, ("tense_aspect_modality",): 1}
    assert {j["taxonomy"]["slug"] for j in judgments(parsed, "error_types")} == {"tofueval-error-types"}


def test_tofueval_summary_is_its_sentences_in_order_with_offsets(tofueval_sample):
    parsed = tofueval.parse(*tofueval_sample)
    summary = next(s for s in records(parsed, "summary") if s["id"].endswith("Carp population in Alameda/Model-Extra"))
    assert summary["id"] == "AlamedaCC_07162019_2019-6992/103/Carp population in Alameda/Model-Extra"
    assert summary["system"] == "Model-Extra" and summary["origin"] == "release"
    assert summary["text"].startswith("The city of Alameda held a public meeting")
    assert [s["index"] for s in summary["sentences"]] == [0, 1, 2]
    assert all(summary["text"][s["start"] : s["end"]] == s["text"] for s in summary["sentences"])
    first = summary["judgments"][0]
    assert (first["unit"], first["value"]) == ("sentence:0", "inconsistent")
    assert first["explanation"].startswith("It is not clear from the source document")


def test_tofueval_items_carry_topic_category_and_key_points(tofueval_sample):
    parsed = tofueval.parse(*tofueval_sample)
    item = next(i for i in records(parsed, "item") if i["topic"] == "Strategies for managing carp")
    assert item["key"] == "AlamedaCC_07162019_2019-6992/103/Strategies for managing carp"
    assert item["summaries"] == sorted(item["summaries"]) and len(item["summaries"]) == 6
    by_dimension = {j["dimension"]: j for j in item["judgments"]}
    assert by_dimension["topic_category"]["value"] == "marginal"
    assert len(by_dimension["key_points"]["value"]) == 2 and by_dimension["key_points"]["unit"] == "item"
    assert Counter(j["value"] for j in judgments(parsed, "topic_category")) == {"marginal": 4, "main": 2}


def test_tofueval_without_documents_warns_once_per_missing_document(data):
    parsed = tofueval.parse([data / "tofueval_sample"], {})
    assert parsed.issues == []
    assert all(d["text_missing"] and d["text"] == "" for d in records(parsed, "document"))
    assert [(w.file, w.line) for w in parsed.warnings] == [
        ("meetingbank_factual_eval_test.csv", 2),
        ("meetingbank_factual_eval_test.csv", 50),
    ]
    assert "18 summaries will not be offered for annotation" in parsed.warnings[0].message


def test_tofueval_accepts_individual_files(data, tmp_path):
    folder = data / "tofueval_sample"
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    parsed = tofueval.parse(files, {"documents": data / "meetingbank_documents_sample.jsonl"})
    assert parsed.issues == [] and len(records(parsed, "summary")) == 36


def test_tofueval_line_numbers_count_multi_line_cells(tmp_path):
    path = write(
        tmp_path / "toy_factual_eval_test.csv",
        FACTUAL_HEADER + 'd1,1,T,m,1,First.,no,"spans\ntwo lines",Extrinsic Information\nd1,1,T,m,2,Second.,maybe,,\n',
    )
    parsed = tofueval.parse([path], {})
    assert issues(parsed) == [("toy_factual_eval_test.csv", 4, "sent_label")]


def test_tofueval_error_type_spellings_are_tolerated_and_unknown_ones_kept_as_other(tmp_path):
    path = write(
        tmp_path / "toy_factual_eval_test.csv",
        FACTUAL_HEADER
        + 'd1,1,T,m,1,One.,no,x,"mis-referencing, Tense / Aspect / Modality error"\n'
        + "d1,1,T,m,2,Two.,no,x,Extrinsic Informaton\n"
        + "d1,1,T,m,3,Three.,no,x,Made-up Error\n",
    )
    parsed = tofueval.parse([path], {})
    assert parsed.issues == []
    values = [j["value"] for j in judgments(parsed, "error_types")]
    assert values == [["mis_referencing", "tense_aspect_modality"], ["extrinsic_information"], ["other"]]
    assert [(w.line, w.field) for w in parsed.warnings if "Made-up" in w.message] == [(4, "type")]


@pytest.mark.parametrize(
    ("numbers", "line"),
    [((1, 3), 2), ((1, 1), 3)],
    ids=["gap", "duplicate"],
)
def test_tofueval_sentence_numbers_must_run_from_one_without_gaps(tmp_path, numbers, line):
    rows = "".join(f"d1,1,T,m,{n},Sentence {i}.,yes,,\n" for i, n in enumerate(numbers))
    parsed = tofueval.parse([write(tmp_path / "toy_factual_eval_test.csv", FACTUAL_HEADER + rows)], {})
    assert issues(parsed) == [("toy_factual_eval_test.csv", line, "sent_idx")]


def test_tofueval_missing_column_is_named(tmp_path):
    path = write(tmp_path / "toy_factual_eval_test.csv", FACTUAL_HEADER.replace(",sent_label", "") + "d1\n")
    assert issues(tofueval.parse([path], {})) == [("toy_factual_eval_test.csv", 1, "sent_label")]


def test_tofueval_key_points_must_be_a_list_of_strings(tmp_path):
    path = write(
        tmp_path / "toy_completeness_final.csv",
        "doc_id,annotation_id,topic,key_points\nd1,1,T,['one']\nd1,1,U,not a list\nd1,1,V,\"[1, 2]\"\n",
    )
    parsed = tofueval.parse([path], {})
    assert issues(parsed) == [
        ("toy_completeness_final.csv", 3, "key_points"),
        ("toy_completeness_final.csv", 4, "key_points"),
    ]


def test_tofueval_key_points_twice_for_one_item_is_an_issue(tmp_path):
    path = write(
        tmp_path / "toy_completeness_final.csv",
        "doc_id,annotation_id,topic,key_points\nd1,1,T,['one']\nd1,1,T,['two']\n",
    )
    assert issues(tofueval.parse([path], {})) == [("toy_completeness_final.csv", 3, "key_points")]


def test_tofueval_over_long_csv_record_is_refused(tmp_path, settings):
    settings.IMPORT_MAX_LINE_BYTES = 100
    rows = "d1,1,T,m,1,One.,yes,,\n" + f"d1,1,T,m,2,{'x' * 120}.,yes,,\n"
    parsed = tofueval.parse([write(tmp_path / "toy_factual_eval_test.csv", FACTUAL_HEADER + rows)], {})
    assert issues(parsed) == [("toy_factual_eval_test.csv", 3, "")]


def test_tofueval_completeness_without_summaries_still_gives_its_item(tmp_path):
    path = write(
        tmp_path / "toy_completeness_final.csv", "doc_id,annotation_id,topic,key_points\nd1,7,T,\"['a', 'b']\"\n"
    )
    parsed = tofueval.parse([path], {})
    assert parsed.issues == []
    [item] = records(parsed, "item")
    assert (item["key"], item["summaries"], item["judgments"][0]["value"]) == ("d1/7/T", [], ["a", "b"])
    assert len(records(parsed, "document")) == len(records(parsed, "topic")) == 1


def test_tofueval_unknown_topic_category_names_its_line(tmp_path):
    write(tmp_path / "toy_factual_eval_test.csv", FACTUAL_HEADER + "d1,1,T,m,1,One.,yes,,\n")
    write(tmp_path / "toy_topic_category.json", '{\n  "T": "main",\n  "U": "central"\n}\n')
    assert issues(tofueval.parse([tmp_path], {})) == [("toy_topic_category.json", 3, "U")]


def test_tofueval_bad_utf8_and_truncated_json_name_their_lines(tmp_path):
    (tmp_path / "toy_factual_eval_test.csv").write_bytes(FACTUAL_HEADER.encode() + b"d1,1,T,m,1,Caf\xe9.,yes,,\n")
    write(tmp_path / "document_ids_dev_test_split.json", '{\n  "test": {"toy": ["d1"]},\n  "dev": {"toy": [\n')
    assert sorted(issues(tofueval.parse([tmp_path], {}))) == [
        ("document_ids_dev_test_split.json", 4, ""),
        ("toy_factual_eval_test.csv", 2, ""),
    ]


def test_tofueval_documents_file_with_wrong_types_is_an_issue(tmp_path):
    labels = write(tmp_path / "toy_factual_eval_test.csv", FACTUAL_HEADER + "d1,1,T,m,1,One.,yes,,\n")
    documents = write(
        tmp_path / "docs.jsonl", '{"doc_id": "d1", "turns": ["A: hi"]}\n{"doc_id": "d2", "turns": "A: hi"}\n'
    )
    assert issues(tofueval.parse([labels], {"documents": documents})) == [("docs.jsonl", 2, "turns")]


# -- SummEdits -------------------------------------------------------------------------------------
def summedits_rows(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("domain", "rows", "consistent", "percent"), [("sales_call", 68, 25, 37.9), ("scitldr", 49, 6, 12.8)]
)
def test_summedits_sample_gives_seeds_edits_and_labels_per_domain(data, domain, rows, consistent, percent):
    path = data / "summedits_sample" / f"summedits_{domain}.json"
    released = summedits_rows(path)
    edits = [r for r in released if not r["id"].endswith("_og")]
    assert len(released) == rows and sum(r["label"] == 1 for r in edits) == consistent
    parsed = summedits.parse([path], {})
    assert parsed.issues == [] and parsed.warnings == []
    summaries = records(parsed, "summary")
    assert len(summaries) == rows and sum(s["seed"] is not None for s in summaries) == 2
    labels = Counter(j["value"] for j in judgments(parsed, "edit_label"))
    assert labels["consistent"] == consistent and sum(labels.values()) == len(edits)
    assert round(100 * labels["consistent"] / len(edits), 1) == percent
    assert [j["value"] for j in judgments(parsed, "seed_consistent")] == [True, True]
    assert len(judgments(parsed, "edit_types")) == sum(bool(r["edit_types"]) for r in edits)
    assert {d["dataset"] for d in records(parsed, "document")} == {domain}


def test_summedits_seed_item_holds_seed_and_edits(data):
    parsed = summedits.parse([data / "summedits_sample" / "summedits_scitldr.json"], {})
    item = next(i for i in records(parsed, "item") if i["key"] == "rJIN_4lA-_og")
    assert item["summaries"][0] == "rJIN_4lA-_og" and len(item["summaries"]) == 16
    assert item["document"] == "summedits-scitldr-rJIN_4lA-"
    edit = next(s for s in records(parsed, "summary") if s["id"] == "rJIN_4lA-_0")
    assert edit["edit_of"] == "rJIN_4lA-_og" and edit["judgments"][0]["item"] == "rJIN_4lA-_og"


def summedits_file(tmp_path: Path, rows: list[dict], name: str = "summedits_toy.json") -> Path:
    return write(tmp_path / name, "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")


def toy_row(id: str, summary: str = "Ann met Bo.", label=1, **extra) -> dict:
    row = {
        "id": id,
        "doc": "Ann met Bo on Monday.",
        "summary": summary,
        "label": label,
        "original_summary": "Ann met Bo.",
        "edit_types": [],
        "split": "test",
    }
    return row | extra


def test_summedits_domain_override_and_literal_edit_types(tmp_path):
    rows = [toy_row("s_og"), toy_row("s_0", "Ann met Cy.", "0", edit_types="['entity_modification']")]
    parsed = summedits.parse([summedits_file(tmp_path, rows, "release.json")], {"dataset": "news"})
    assert parsed.issues == []
    assert records(parsed, "summary")[0]["seed"] == {"domain": "news", "query": ""}
    assert judgments(parsed, "edit_types")[0]["value"] == ["entity_modification"]
    assert judgments(parsed, "edit_label")[0]["value"] == "inconsistent"


@pytest.mark.parametrize(
    ("rows", "line", "field"),
    [
        ([toy_row("s_og"), toy_row("s_og")], 3, "id"),
        ([toy_row("s_og"), toy_row("t_0")], 3, "id"),
        ([toy_row("s_og"), toy_row("s_0", original_summary="Other.")], 3, "original_summary"),
        ([toy_row("s_og", label="yes")], 2, "label"),
        ([toy_row("s_og", label=True)], 2, "label"),
        ([toy_row("s_og"), toy_row("s_0", edit_types=["paraphrase"])], 3, "edit_types"),
        ([toy_row("s_og"), {k: v for k, v in toy_row("s_0").items() if k != "summary"}], 3, "summary"),
    ],
    ids=["duplicate id", "missing seed", "seed differs", "label word", "label bool", "unknown edit type", "no summary"],
)
def test_summedits_bad_rows_name_their_line_and_field(tmp_path, rows, line, field):
    assert issues(summedits.parse([summedits_file(tmp_path, rows)], {})) == [("summedits_toy.json", line, field)]


def test_summedits_truncated_json_names_the_line(tmp_path):
    path = write(
        tmp_path / "summedits_toy.json", '[\n  {"id": "s_og", "doc": "D", "summary": "S", "label": 1},\n  {"id": '
    )
    assert issues(summedits.parse([path], {})) == [("summedits_toy.json", 3, "")]


def test_summedits_file_that_is_not_an_array_is_an_issue(tmp_path):
    path = write(tmp_path / "summedits_toy.json", '\n{"id": "s_og"}\n')
    assert issues(summedits.parse([path], {})) == [("summedits_toy.json", 2, "")]


# -- MADISSE ------------------------------------------------------------------------------------------
def madisse_rows(data: Path) -> list[dict]:
    return [json.loads(line) for line in (data / "madisse_sample.jsonl").read_text(encoding="utf-8").splitlines()]


def test_madisse_sample_gives_one_item_per_sentence(data):
    parsed = madisse.parse([data / "madisse_sample.jsonl"], {"documents": data / "meetingbank_documents_sample.jsonl"})
    rows = madisse_rows(data)
    assert parsed.issues == [] and parsed.warnings == []
    assert len(rows) == 80 and sum(r["ambiguity"] == "1" for r in rows) == 9
    assert len(records(parsed, "summary")) == len(records(parsed, "item")) == 80
    assert Counter(j["value"] for j in judgments(parsed, "ambiguous")) == {False: 71, True: 9}
    assert Counter(tuple(j["value"]) for j in judgments(parsed, "ambiguity_types")) == {
        ("implicit_reasoning.deduction",): 4,
        ("implicit_reasoning.commonsense",): 3,
        ("implicit_reasoning.deduction", "meaning.synonymy"): 1,
        ("implicit_reasoning.value_based",): 1,
    }
    ids = {d["id"] for d in records(parsed, "document")}
    assert ids == {"AlamedaCC_07162019_2019-6992", "LongBeachCC_04222014_14-0307"}


def test_madisse_summary_and_item_shape(data):
    parsed = madisse.parse([data / "madisse_sample.jsonl"], {})
    summary, item = records(parsed, "summary")[0], records(parsed, "item")[0]
    assert summary["id"].startswith(summary["document"] + "/s/") and summary["document"].startswith("madisse-")
    assert summary["sentences"] == [{"index": 0, "start": 0, "end": len(summary["text"]), "text": summary["text"]}]
    assert summary["provenance"]["source"] == "madisse"
    assert item["sentence"] == {"summary": summary["id"], "index": 0} and item["key"] == summary["id"]


MADISSE_ROW = {
    "doc": ["A: We meet at four."],
    "summary": "They meet at 4.",
    "ambiguity": "0",
    "category": "",
    "sub-category": "",
    "explanation": "",
}


def madisse_file(tmp_path: Path, rows: list[dict]) -> Path:
    return write(tmp_path / "madisse.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def test_madisse_repeated_sentence_is_kept_once_unless_labels_differ(tmp_path):
    parsed = madisse.parse([madisse_file(tmp_path, [MADISSE_ROW, MADISSE_ROW])], {})
    assert parsed.issues == [] and len(records(parsed, "item")) == 1
    parsed = madisse.parse([madisse_file(tmp_path, [MADISSE_ROW, MADISSE_ROW | {"ambiguity": "1"}])], {})
    assert issues(parsed) == [("madisse.jsonl", 2, "ambiguity")]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"ambiguity": "2"}, "ambiguity"),
        ({"doc": "A: hi"}, "doc"),
        ({"summary": ""}, "summary"),
        ({"category": 3}, "category"),
    ],
)
def test_madisse_wrong_values_name_line_and_field(tmp_path, change, field):
    parsed = madisse.parse([madisse_file(tmp_path, [MADISSE_ROW, MADISSE_ROW | change])], {})
    assert issues(parsed) == [("madisse.jsonl", 2, field)]


def test_madisse_truncated_line_and_bad_utf8(tmp_path):
    path = tmp_path / "madisse.jsonl"
    path.write_bytes(json.dumps(MADISSE_ROW).encode() + b'\n{"doc": ["A: x"\n{"summary": "caf\xe9"}\n')
    assert issues(madisse.parse([path], {})) == [("madisse.jsonl", 2, ""), ("madisse.jsonl", 3, "")]


def test_madisse_over_long_line_is_refused(tmp_path, settings):
    settings.IMPORT_MAX_LINE_BYTES = 200
    long_row = MADISSE_ROW | {"explanation": "x" * 300}
    parsed = madisse.parse([madisse_file(tmp_path, [MADISSE_ROW, long_row])], {})
    assert issues(parsed) == [("madisse.jsonl", 2, "")]
    assert "longer than the limit" in parsed.issues[0].message


@pytest.mark.parametrize(
    ("category", "sub_category", "codes"),
    [
        ("implicit reasoning phenomena", "Deduction", ["implicit_reasoning.deduction"]),
        ("Implicit Reasoning", "inference - commonsense", ["implicit_reasoning.commonsense"]),
        (
            "implicit reasoning phenomena/meaning phenomena",
            "Deduction/Semantic relations:Synonymy",
            ["implicit_reasoning.deduction", "meaning.synonymy"],
        ),
        ("meaning phenomena", "Semantic relations:Hypernymy/Hyponymy", ["meaning.hypernymy", "meaning.hyponymy"]),
        ("meaning phenomena", "Structural ambiguity", ["meaning.structural"]),
        ("meaning phenomena", "Non-assertion", ["meaning.non_assertion"]),
        ("context phenomena", "Decontextualisation", ["context.decontextualization"]),
        ("context phenomena", "Other", ["context.other"]),
        ("other evaluability", "", ["other_evaluability"]),
    ],
)
def test_madisse_categories_map_to_taxonomy_codes(category, sub_category, codes):
    parsed = Parsed()
    assert madisse.ambiguity_codes(category, sub_category, madisse.Source("f", 1), parsed) == codes
    assert parsed.warnings == []


def test_madisse_unmappable_sub_category_is_warned_and_kept_as_other(tmp_path):
    row = MADISSE_ROW | {"ambiguity": "1", "category": "context phenomena", "sub-category": "Time shift"}
    parsed = madisse.parse([madisse_file(tmp_path, [row])], {})
    assert parsed.issues == []
    assert judgments(parsed, "ambiguity_types")[0]["value"] == ["context.other"]
    assert [(w.file, w.line, w.field) for w in parsed.warnings] == [("madisse.jsonl", 1, "sub-category")]
    row = row | {"category": "mystery"}
    assert judgments(madisse.parse([madisse_file(tmp_path, [row])], {}), "ambiguity_types")[0]["value"] == [
        "other_evaluability"
    ]


# -- Ramprasad et al. ------------------------------------------------------------------------------------
RAMPRASAD_HEADER = (
    ",docid,model,nonfactual_spans,evidence,summary,factual_error,error_type,dialogue,origin,linguistic_categories\n"
)


def test_ramprasad_sample_gives_summaries_with_located_spans(data):
    path = data / "ramprasad_format_example.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    parsed = ramprasad.parse([path], {})
    assert parsed.issues == [] and parsed.warnings == []
    assert len(rows) == len(records(parsed, "summary")) == len(records(parsed, "item")) == 3
    assert len(records(parsed, "document")) == 2
    spans = judgments(parsed, "span")
    assert len(spans) == 3
    assert [j["value"] for j in judgments(parsed, "has_inconsistency")] == [True, False, True]
    bart = next(s for s in records(parsed, "summary") if s["id"] == "900002/BART")
    value = bart["judgments"][1]["value"]
    assert bart["text"][value["start"] : value["end"]] == "at 5 pm"
    assert value["category"] == "logical_error" and value["error_class"] == "intrinsic"
    assert value["evidence"] == {"text": "meet at half past four", "turns": [0]}
    assert bart["judgments"][2]["unit"] == "summary/span:1"
    assert bart["judgments"][2]["value"]["evidence"] == {"text": None, "turns": []}
    assert bart["sentences"] is None


def ramprasad_file(tmp_path: Path, *rows: str) -> Path:
    return write(tmp_path / "spans.csv", RAMPRASAD_HEADER + "".join(rows))


def ramprasad_row(
    spans="['Bo']",
    evidence="['Not found']",
    error="['Extrinsic_Error']",
    category="['Referential Error']",
    dialogue='"Ann: hi\nCy: hello"',
    docid="7",
    model="m",
) -> str:
    cells = [
        "0",
        docid,
        model,
        f'"{spans}"',
        f'"{evidence}"',
        "Ann greets Bo.",
        "1",
        f'"{error}"',
        dialogue,
        "toy",
        f'"{category}"',
    ]
    return ",".join(cells) + "\n"


def test_ramprasad_span_not_in_summary_is_a_warning(tmp_path):
    parsed = ramprasad.parse([ramprasad_file(tmp_path, ramprasad_row(), ramprasad_row(spans="['Zed']", model="n"))], {})
    assert parsed.issues == []
    assert [(w.file, w.line, w.field) for w in parsed.warnings] == [("spans.csv", 4, "nonfactual_spans")]
    assert "'Zed'" in parsed.warnings[0].message
    assert judgments(parsed, "span")[1]["value"]["start"] is None


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (ramprasad_row(category="['Referential Error', 'Nonsensical']"), "nonfactual_spans"),
        (ramprasad_row(category="['Sarcasm']"), "linguistic_categories"),
        (ramprasad_row(error="['Other_Error']"), "error_type"),
        (ramprasad_row(spans="Bo"), "nonfactual_spans"),
        (ramprasad_row(dialogue='"Ann: something else"'), "dialogue"),
        (ramprasad_row(model=""), "model"),
    ],
    ids=["unequal lists", "unknown category", "unknown class", "not a list", "other dialogue", "no model"],
)
def test_ramprasad_bad_rows_name_their_line_and_field(tmp_path, row, field):
    parsed = ramprasad.parse([ramprasad_file(tmp_path, ramprasad_row(model="first"), row)], {})
    assert issues(parsed) == [("spans.csv", 4, field)]


def test_ramprasad_identical_rows_are_kept_once_and_different_ones_refused(tmp_path):
    parsed = ramprasad.parse([ramprasad_file(tmp_path, ramprasad_row(), ramprasad_row())], {})
    assert parsed.issues == [] and len(records(parsed, "summary")) == 1
    parsed = ramprasad.parse([ramprasad_file(tmp_path, ramprasad_row(), ramprasad_row(evidence="['hi']"))], {})
    assert issues(parsed) == [("spans.csv", 4, "model")]


def test_ramprasad_missing_column_is_named(tmp_path):
    path = write(tmp_path / "spans.csv", RAMPRASAD_HEADER.replace(",origin", "") + "0,7\n")
    assert issues(ramprasad.parse([path], {})) == [("spans.csv", 1, "origin")]
