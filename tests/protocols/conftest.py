"""A small review world: a TofuEval task 1 campaign with a pilot and a main item, two annotators,
two reviewers and a lead (who reviews too), and helpers to label and review."""

import pytest

from annotation.corpus.models import Document, Summary, Topic
from annotation.projects import services as projects
from annotation.projects.models import Role
from annotation.protocols import review, services, tofueval
from annotation.protocols.models import Campaign, Item, Protocol

SECRET_SYSTEM = "secret-summarizer-omega"
EXPLANATION = "The dialogue says 4 pm, not 5 pm."


def make_item(campaign, project, key: str, round_name: str) -> Item:
    turns = [{"speaker": "Ana", "text": "We meet at 4 pm."}, {"speaker": "Ben", "text": "I bring the tickets."}]
    document = Document.objects.create(
        project=project,
        external_id=f"doc-{key}",
        kind="dialogue",
        turns=turns,
        text="\n".join(f"{t['speaker']}: {t['text']}" for t in turns),
    )
    topic = Topic.objects.create(document=document, name="Meeting")
    text = "They meet at 5 pm. Ben brings the tickets."
    summary = Summary.objects.create(
        project=project, document=document, topic=topic, external_id=f"sum-{key}", system=SECRET_SYSTEM, text=text
    )
    summary.sentences.create(index=0, start=0, end=18, text="They meet at 5 pm.")
    summary.sentences.create(index=1, start=19, end=len(text), text="Ben brings the tickets.")
    item = Item.objects.create(campaign=campaign, key=key, document=document, topic=topic, round=round_name)
    item.summaries.set([summary])
    return item


@pytest.fixture
def review_world(project, annotator, lead, make_user):
    """Annotators ann1 (the shared fixture) and yorick-annotates; reviewers
    rev-a and rev-b; the lead; a viewer. Items: "pilot-1" (round pilot) and "main-1" (round main)."""
    people = {"annotator": annotator, "lead": lead}
    for name, username, role in [
        ("annotator2", "yorick-annotates", Role.ANNOTATOR),
        ("rev_a", "rev-a", Role.REVIEWER),
        ("rev_b", "rev-b", Role.REVIEWER),
        ("viewer", "vera-views", Role.VIEWER),
    ]:
        people[name] = make_user(username)
        projects.add_member(project=project, user=people[name], role=role)
    campaign = Campaign.objects.create(
        project=project, slug="t1", name="Task 1", protocol=Protocol.TOFUEVAL_TASK1, rounds=["pilot", "main"]
    )
    items = {key: make_item(campaign, project, key, key.split("-")[0]) for key in ("pilot-1", "main-1")}
    return {**people, "campaign": campaign, "items": items, "project": project}


def sentences(item: Item) -> list:
    return list(item.summaries.get().sentences.order_by("index"))


def submit_labels(item: Item, annotator, *, inconsistent: dict, attempt: str = "first") -> None:
    """Submit task 1 for `annotator`: the sentences in `inconsistent` (sentence -> explanation)
    inconsistent, every other one consistent."""
    assignment = services.assign(item=item, annotator=annotator, seed=1)
    draft = {"topic_category": "main"}
    for summary in item.summaries.all():
        draft[f"r-{summary.pk}"] = "4"
        for sentence in summary.sentences.all():
            draft[f"s-{sentence.pk}"] = "consistent"
    for sentence, explanation in inconsistent.items():
        draft[f"s-{sentence.pk}"], draft[f"e-{sentence.pk}"] = "inconsistent", explanation
    tofueval.submit(assignment=assignment, draft=draft, client_token=f"{attempt}-{annotator.pk}", user=annotator)


def flag_first_sentence(world, key: str) -> tuple:
    """Both annotators label the item; only the first annotator finds its first sentence inconsistent."""
    item = world["items"][key]
    first = sentences(item)[0]
    submit_labels(item, world["annotator"], inconsistent={first: EXPLANATION})
    submit_labels(item, world["annotator2"], inconsistent={})
    return item, first


def keep_and_confirm(item, sentence, *, reviewer, checker):
    decision = review.decide(item=item, sentence=sentence, reviewer=reviewer, decision="keep")
    return review.check_decision(decision=decision, checker=checker, confirm=True)


@pytest.fixture
def flagged(review_world):
    """The pilot item's first sentence, labelled inconsistent by one of two annotators."""
    return flag_first_sentence(review_world, "pilot-1")
