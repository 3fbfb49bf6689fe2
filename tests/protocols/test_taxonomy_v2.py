"""Version 2 of the MADISSE and Ramprasad taxonomies: same codes as version 1, a definition and an
example of each required kind for every selectable type, and version 1 left as it was."""

import pytest

from annotation.protocols import taxonomy_data
from annotation.protocols.models import Taxonomy, TaxonomyLabel

REQUIRED_KINDS = {"madisse-ambiguity": {"ambiguous", "non_ambiguous"}, "ramprasad-categories": {"inconsistent"}}
V1 = {spec["slug"]: spec for spec in taxonomy_data.TAXONOMIES_V1}


def codes(slug: str, version: int) -> set[str]:
    return set(
        TaxonomyLabel.objects.filter(taxonomy__slug=slug, taxonomy__version=version).values_list("code", flat=True)
    )


def leaves(slug: str, version: int) -> list[TaxonomyLabel]:
    return list(TaxonomyLabel.objects.filter(taxonomy__slug=slug, taxonomy__version=version, children__isnull=True))


def spec_rows(labels: list[dict]) -> list[tuple]:
    rows = []
    for spec in labels:
        rows.append((spec["code"], spec["name"], spec["definition"], spec["examples"]))
        rows.extend(spec_rows(spec["children"]))
    return rows


@pytest.mark.django_db
def test_migrations_load_both_taxonomies_at_version_2():
    assert set(Taxonomy.objects.filter(version=2).values_list("slug", flat=True)) == set(REQUIRED_KINDS)


@pytest.mark.django_db
@pytest.mark.parametrize("slug", REQUIRED_KINDS)
def test_version_2_has_exactly_the_codes_of_version_1(slug):
    assert codes(slug, 2) == codes(slug, 1)
    assert codes(slug, 2)


@pytest.mark.django_db
@pytest.mark.parametrize("slug", REQUIRED_KINDS)
def test_every_version_2_label_has_a_definition(slug):
    assert not TaxonomyLabel.objects.filter(taxonomy__slug=slug, taxonomy__version=2, definition="").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("slug", REQUIRED_KINDS)
def test_every_version_2_leaf_has_an_example_of_each_required_kind(slug):
    for leaf in leaves(slug, 2):
        kinds = {e["kind"] for e in leaf.examples if e["text"].startswith("Source: ") and "Summary: " in e["text"]}
        assert kinds >= REQUIRED_KINDS[slug], leaf.code


@pytest.mark.django_db
def test_madisse_version_2_keeps_other_evaluability_selectable():
    assert "other_evaluability" in {leaf.code for leaf in leaves("madisse-ambiguity", 2)}


@pytest.mark.django_db
@pytest.mark.parametrize("slug", V1)
def test_version_1_rows_still_match_the_version_1_data(slug):
    rows = TaxonomyLabel.objects.filter(taxonomy__slug=slug, taxonomy__version=1).order_by("order")
    stored = [(r.code, r.name, r.definition, r.examples) for r in rows]
    assert stored == spec_rows(V1[slug]["labels"])


@pytest.mark.django_db
def test_loading_version_2_again_adds_nothing():
    before = TaxonomyLabel.objects.count()
    taxonomy_data.load(Taxonomy, TaxonomyLabel, taxonomies=taxonomy_data.TAXONOMIES_V2, version=2)
    assert TaxonomyLabel.objects.count() == before
