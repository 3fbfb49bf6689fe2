import json

import pytest

from annotation.corpus import services
from annotation.corpus.formats.base import ImportFailed
from annotation.protocols.models import Campaign, Judgment

pytestmark = pytest.mark.django_db

LINES = [
    {"item": "q1", "annotator": "ann-a", "dimension": "fluency", "value": 4, "level": "ordinal", "round": "pilot"},
    {"item": "q1", "annotator": "ann-b", "dimension": "fluency", "value": 5, "level": "ordinal", "round": "pilot"},
    {"item": "q1", "annotator": "ann-a", "dimension": "faithful", "value": "yes", "explanation": "all in the source"},
    {"item": "q1", "annotator": "ann-b", "dimension": "faithful", "value": "no"},
    {"item": 7, "annotator": "ann-a", "dimension": "faithful", "value": "yes"},
]


def write(tmp_path, lines, name="study.jsonl"):
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_labels_become_item_judgments_with_levels_in_the_campaign(tmp_path):
    counts, _ = services.import_data(project_slug="ext", format="labels", paths=[write(tmp_path, LINES)])
    assert counts["judgments"] == 5 and counts["items"] == 2
    campaign = Campaign.objects.get(slug="labels-study")
    assert campaign.protocol == "labels" and campaign.settings == {
        "levels": {"fluency": "ordinal", "faithful": "nominal"}
    }
    assert set(campaign.items.values_list("key", "round")) == {("q1", "pilot"), ("7", "main")}
    explained = Judgment.objects.get(
        dimension="faithful", assignment__annotator__memberships__pseudonym="ann-a", assignment__item__key="q1"
    )
    assert explained.explanation == "all in the source" and explained.target == "item"
    again, _ = services.import_data(project_slug="ext", format="labels", paths=[write(tmp_path, LINES)])
    assert again == {}


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        (
            {"item": "q2", "annotator": "a", "dimension": "fluency", "value": "high", "level": "ordinal"},
            "value",
            "must be a number for the ordinal level",
        ),
        ({"item": "q2", "annotator": "a", "dimension": "fluency", "value": 3}, "level", "fluency is ordinal at line 1"),
        (
            {"item": "q1", "annotator": "ann-a", "dimension": "faithful", "value": "no"},
            "item",
            "twice; first at line 3",
        ),
        ({"item": "q2", "annotator": "", "dimension": "x", "value": 1}, "annotator", "non-empty string"),
        ({"item": "q2", "annotator": "a", "dimension": "x", "value": [1]}, "value", "string, number or true/false"),
        ({"item": "q2", "annotator": "a", "dimension": "x", "value": 1, "level": "ratio"}, "level", "must be one of"),
        (
            {"item": "q1", "annotator": "c", "dimension": "x", "value": 1, "round": "main"},
            "round",
            "is in round 'pilot'",
        ),
    ],
)
def test_bad_labels_are_reported_by_line_and_field(tmp_path, line, field, message):
    with pytest.raises(ImportFailed) as caught:
        services.import_data(project_slug="ext", format="labels", paths=[write(tmp_path, [*LINES, line])])
    issues = [str(i) for i in caught.value.issues]
    assert any(f"study.jsonl, line 6, field '{field}'" in i and message in i for i in issues), issues
    assert not Campaign.objects.exists()


def test_campaign_slug_can_be_chosen(tmp_path):
    services.import_data(
        project_slug="ext", format="labels", paths=[write(tmp_path, LINES)], options={"campaign": "wave-2"}
    )
    assert Campaign.objects.filter(slug="wave-2").exists()
