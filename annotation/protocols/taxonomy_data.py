"""The four taxonomies of the seed papers, as data, version by version.

Definitions are written from the papers' appendices (TofuEval App. G, Ramprasad et al. App. A,
MADISSE Table 6, SummEdits section 5) in our words; data migrations load them (0002: version 1,
0007: version 2). A change of wording, labels or examples is a new version in a new migration, so
earlier judgments keep their meaning.
"""


def label(code, name, definition, examples=(), children=()):
    return {
        "code": code,
        "name": name,
        "definition": definition,
        "examples": list(examples),
        "children": list(children),
    }


def example(kind, text):
    return {"kind": kind, "text": text}


TOFUEVAL_ERROR_TYPES = {
    "slug": "tofueval-error-types",
    "name": "TofuEval error types",
    "source": "Tang et al. 2024, TofuEval, Appendix G",
    "description": "Types of factual inconsistency assigned to a summary sentence labelled inconsistent.",
    "labels": [
        label(
            "extrinsic_information",
            "Extrinsic Information",
            "The sentence contains information that is not in the source and cannot be verified from it.",
        ),
        label(
            "mis_referencing",
            "Mis-Referencing",
            "A property or event that is in the source is attributed to the wrong entity (speaker, person, place).",
        ),
        label(
            "opinion_as_fact",
            "Stating Opinion-as-Fact",
            "Something a speaker proposed, believed or argued is presented as an established fact.",
        ),
        label(
            "reasoning",
            "Reasoning Error",
            "The sentence draws a conclusion or makes an inference that the source does not support.",
        ),
        label(
            "tense_aspect_modality",
            "Tense/Aspect/Modality Error",
            "Wrong tense, aspect or modality: e.g. a planned or possible event stated as done or certain.",
        ),
        label("contradiction", "Contradiction", "The sentence states the opposite of what the source says."),
        label(
            "nuanced_meaning_shift",
            "Nuanced Meaning Shift",
            "The sentence subtly changes the meaning of what the source says (emphasis, scope, strength).",
        ),
        label("other", "Other", "An inconsistency that none of the other types describes; explain it."),
    ],
}

RAMPRASAD_CATEGORIES = {
    "slug": "ramprasad-categories",
    "name": "Span error categories (Ramprasad et al.)",
    "source": "Ramprasad et al. 2024, section 2.3 and Appendix A",
    "description": "Linguistic categories of a minimal inconsistent span in a dialogue summary.",
    "labels": [
        label(
            "circumstantial_inference",
            "Circumstantial Inference",
            "The span states something plausible from the circumstances of the dialogue but never said or implied.",
            [
                example(
                    "inconsistent",
                    "Greta asks Ben to pick up Max → 'their son' (the dialogue never says Max is their son).",
                )
            ],
        ),
        label(
            "logical_error",
            "Logical Error",
            "The span follows from faulty reasoning over what was said: wrong time, number, order or conclusion.",
            [example("inconsistent", "'meet at half past four' → 'will meet at 5 pm'.")],
        ),
        label(
            "world_knowledge",
            "World Knowledge",
            "The span relies on outside knowledge of the world that the dialogue does not give.",
        ),
        label(
            "referential_error",
            "Referential Error",
            "The span refers to the wrong person or thing (wrong speaker, pronoun or name).",
        ),
        label(
            "figurative_misinterpretation",
            "Figurative Misinterpretation",
            "Figurative language (idiom, sarcasm, joke) in the dialogue is read literally or wrongly.",
        ),
        label("nonsensical", "Nonsensical", "The span makes no sense or cannot be interpreted."),
    ],
}

MADISSE_AMBIGUITY = {
    "slug": "madisse-ambiguity",
    "name": "Ambiguity taxonomy (MADISSE)",
    "source": "Koupaee et al., MADISSE, section 4 and Table 6",
    "description": "Ambiguities that affect whether a summary sentence can be judged consistent with its source.",
    "labels": [
        label(
            "implicit_reasoning",
            "Implicit reasoning",
            "Judging the sentence needs reasoning the source leaves implicit.",
            children=[
                label(
                    "implicit_reasoning.deduction",
                    "Deduction",
                    "The sentence follows only by deduction from several statements in the source.",
                    [
                        example(
                            "ambiguous", "Source: the vote passed 5-0. Summary: the council unanimously approved it."
                        ),
                        example(
                            "non_ambiguous",
                            "Source: the council approved it unanimously. Summary: the council approved it.",
                        ),
                    ],
                ),
                label(
                    "implicit_reasoning.commonsense",
                    "Common-sense inference",
                    "The sentence needs a common-sense inference that annotators may or may not accept.",
                    [example("ambiguous", "Source: he left the meeting early. Summary: he was busy.")],
                ),
                label(
                    "implicit_reasoning.value_based",
                    "Value-based inference",
                    "The sentence adds a judgement of value (good, important, successful) that depends on the reader.",
                    [example("ambiguous", "Summary: the council made a wise decision.")],
                ),
                label("implicit_reasoning.other", "Other implicit reasoning", "Another kind of implicit reasoning."),
            ],
        ),
        label(
            "meaning",
            "Meaning",
            "A word or structure in the sentence can be read in more than one way.",
            children=[
                label(
                    "meaning.hypernymy",
                    "Hypernymy",
                    "The sentence uses a more general term than the source (vehicle for car).",
                ),
                label(
                    "meaning.hyponymy",
                    "Hyponymy",
                    "The sentence uses a more specific term than the source (car for vehicle).",
                ),
                label(
                    "meaning.synonymy",
                    "Synonymy / paraphrase",
                    "A near-synonym or paraphrase whose equivalence to the source wording is debatable.",
                ),
                label(
                    "meaning.structural",
                    "Structural",
                    "The sentence's syntax allows several readings (attachment, scope).",
                ),
                label("meaning.lexical", "Lexical", "A word of the sentence has several senses and the sense matters."),
                label(
                    "meaning.vagueness", "Vagueness", "A vague term (many, soon, some) makes the claim hard to check."
                ),
                label(
                    "meaning.non_assertion",
                    "Non-assertion",
                    "The sentence asks, suggests or hedges rather than asserts, so truth does not clearly apply.",
                ),
                label("meaning.other", "Other meaning", "Another meaning-level ambiguity."),
            ],
        ),
        label(
            "context",
            "Context",
            "The sentence's relation to the source's context is unclear.",
            children=[
                label(
                    "context.decontextualization",
                    "Decontextualization",
                    "A statement true in its context in the source is presented without it, which changes how it reads.",
                ),
                label(
                    "context.conflation",
                    "Conflation",
                    "Statements from different parts, speakers or events of the source are merged into one claim.",
                ),
                label("context.other", "Other context", "Another context-level ambiguity."),
            ],
        ),
        label(
            "other_evaluability",
            "Other evaluability issue",
            "Something else makes the sentence hard to evaluate; describe it.",
        ),
    ],
}

SUMMEDITS_EDIT_TYPES = {
    "slug": "summedits-edit-types",
    "name": "SummEdits edit types",
    "source": "Laban et al. 2023, SummEdits, section 5",
    "description": "What a minor edit of a seed summary changed.",
    "labels": [
        label("entity_modification", "Entity modification", "A named entity, number or date is replaced by another."),
        label("antonym_swap", "Antonym swap", "A word is replaced by its antonym or a word of opposite meaning."),
        label(
            "hallucinated_fact_insertion", "Hallucinated fact insertion", "A fact that is not in the document is added."
        ),
        label("negation_insertion_removal", "Negation insertion/removal", "A negation is added or taken away."),
    ],
}

TAXONOMIES_V1 = [TOFUEVAL_ERROR_TYPES, RAMPRASAD_CATEGORIES, MADISSE_AMBIGUITY, SUMMEDITS_EDIT_TYPES]

# Version 2: sharper definitions and an inline example of each kind for every selectable type,
# so annotators compare a case against a near miss. Same slugs and codes as version 1.

RAMPRASAD_CATEGORIES_V2 = {
    "slug": "ramprasad-categories",
    "name": "Span error categories (Ramprasad et al.)",
    "source": "Ramprasad et al. 2024, section 2.3 and Appendix A",
    "description": "Linguistic categories of a minimal inconsistent span in a dialogue summary. Mark the "
    "smallest span that is wrong and pick the category that explains why.",
    "labels": [
        label(
            "circumstantial_inference",
            "Circumstantial Inference",
            "The span states something the dialogue never says but that seems likely from its circumstances "
            "(who talks, what they plan, how they relate): a plausible guess, not a supported fact.",
            [
                example(
                    "inconsistent",
                    "Source: Greta: can you pick up Max from school? Ben: sure. "
                    "Summary: Ben will pick up their son Max.",
                ),
                example(
                    "consistent",
                    "Source: Greta: can you pick up Max from school? Ben: sure. "
                    "Summary: Ben will pick up Max from school.",
                ),
            ],
        ),
        label(
            "logical_error",
            "Logical Error",
            "The span draws a wrong conclusion from what was said: faulty arithmetic, time, date, order, "
            "cause or negation.",
            [
                example(
                    "inconsistent",
                    "Source: Ana: let's meet at half past four. Ben: ok. Summary: Ana and Ben will meet at 5 pm.",
                ),
                example(
                    "consistent",
                    "Source: Ana: let's meet at half past four. Ben: ok. Summary: Ana and Ben will meet at 4:30.",
                ),
            ],
        ),
        label(
            "world_knowledge",
            "World Knowledge",
            "The span adds a fact from outside the dialogue (about places, people, events or how the world "
            "works) that the dialogue neither states nor implies, whether or not it is true.",
            [
                example(
                    "inconsistent",
                    "Source: Tom: watching the final tonight! Summary: Tom will watch the World Cup final tonight.",
                ),
                example("consistent", "Source: Tom: watching the final tonight! Summary: Tom will watch a final."),
            ],
        ),
        label(
            "referential_error",
            "Referential Error",
            "The span attributes something to the wrong person or thing: a wrong speaker, swapped roles, or a "
            "name or pronoun that points to the wrong referent.",
            [
                example(
                    "inconsistent",
                    "Source: Ana: Ben, can you bring the tickets? Ben: sure. Summary: Ana will bring the tickets.",
                ),
                example(
                    "consistent",
                    "Source: Ana: Ben, can you bring the tickets? Ben: sure. Summary: Ben will bring the tickets.",
                ),
            ],
        ),
        label(
            "figurative_misinterpretation",
            "Figurative Misinterpretation",
            "The span reads figurative language in the dialogue (idiom, sarcasm, irony, hyperbole, metaphor, "
            "joke) literally or otherwise wrongly.",
            [
                example(
                    "inconsistent",
                    "Source: Lou: oh great, the server is down again. Just perfect. "
                    "Summary: Lou is pleased with the server.",
                ),
                example(
                    "consistent",
                    "Source: Lou: oh great, the server is down again. Just perfect. "
                    "Summary: Lou is annoyed that the server is down again.",
                ),
            ],
        ),
        label(
            "nonsensical",
            "Nonsensical",
            "The span cannot be interpreted: garbled, self-contradictory or so ungrammatical that no reading of "
            "it can be checked against the dialogue.",
            [
                example(
                    "inconsistent",
                    "Source: Mia: see you at the gym at 6. Summary: Mia will gym the six at see them.",
                ),
                example(
                    "consistent", "Source: Mia: see you at the gym at 6. Summary: Mia will meet them at the gym at 6."
                ),
            ],
        ),
    ],
}

MADISSE_AMBIGUITY_V2 = {
    "slug": "madisse-ambiguity",
    "name": "Ambiguity taxonomy (MADISSE)",
    "source": "Koupaee et al., MADISSE, section 4 and Table 6",
    "description": "Ambiguities that affect whether a summary sentence can be judged consistent with its source: "
    "reasonable annotators could label the sentence faithful or unfaithful depending on how they read it.",
    "labels": [
        label(
            "implicit_reasoning",
            "Implicit reasoning",
            "Whether the sentence is supported depends on a reasoning step the source leaves implicit; "
            "reasonable annotators may accept or reject that step.",
            children=[
                label(
                    "implicit_reasoning.deduction",
                    "Deduction",
                    "The sentence follows only by combining several statements of the source, and it is debatable "
                    "whether the combination licenses it.",
                    [
                        example(
                            "ambiguous",
                            "Source: Chair: five votes for, none against; two members were absent. "
                            "Summary: The council unanimously approved the budget.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Chair: all seven members voted for the budget. "
                            "Summary: The council approved the budget.",
                        ),
                    ],
                ),
                label(
                    "implicit_reasoning.commonsense",
                    "Common-sense inference",
                    "The sentence rests on an everyday inference (likely causes, intentions, consequences) that "
                    "the source suggests but does not state.",
                    [
                        example(
                            "ambiguous",
                            "Source: Tom: I have to leave at three, my daughter's school play starts at four. "
                            "Summary: Tom will attend his daughter's school play.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Tom: I'm leaving at three to see my daughter's school play. "
                            "Summary: Tom will attend his daughter's school play.",
                        ),
                    ],
                ),
                label(
                    "implicit_reasoning.value_based",
                    "Value-based inference",
                    "The sentence adds a judgement of value (good, wise, important, successful) whose truth depends "
                    "on the reader's values rather than on the source.",
                    [
                        example(
                            "ambiguous",
                            "Source: Chair: we cut travel by 40% to fund two hires. "
                            "Summary: The board made a sensible trade-off to fund two hires.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Chair: we cut travel by 40% to fund two hires. "
                            "Summary: The board cut travel spending to fund two hires.",
                        ),
                    ],
                ),
                label(
                    "implicit_reasoning.other",
                    "Other implicit reasoning",
                    "An implicit reasoning step that is not deduction, common sense or a value judgement (e.g. "
                    "generalising from a past case); describe it.",
                    [
                        example(
                            "ambiguous",
                            "Source: Lee: last year's launch slipped two months because of testing. "
                            "Summary: Lee expects this launch to be delayed too.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Lee: I expect this launch to slip, like last year's. "
                            "Summary: Lee expects this launch to be delayed too.",
                        ),
                    ],
                ),
            ],
        ),
        label(
            "meaning",
            "Meaning",
            "A word, phrase or structure in the sentence (or in the source passage it rests on) can be read in "
            "more than one way, and the readings differ in whether the sentence is supported.",
            children=[
                label(
                    "meaning.hypernymy",
                    "Hypernymy",
                    "The sentence uses a more general term than the source, and it is debatable whether the general "
                    "term still says only what the source says (mobile app for iOS app).",
                    [
                        example(
                            "ambiguous",
                            "Source: Dev: the iOS app crashes on login. Summary: The mobile app crashes on login.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Dan: I just got a Labrador puppy. Summary: Dan got a dog.",
                        ),
                    ],
                ),
                label(
                    "meaning.hyponymy",
                    "Hyponymy",
                    "The sentence uses a more specific term than the source, which the source's context may or may "
                    "not justify (engineers for people).",
                    [
                        example(
                            "ambiguous",
                            "Source: Rob: the support desk needs more people, the tickets are all technical. "
                            "Summary: Rob asks for more support engineers.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Rob: we need two more engineers on the support desk. "
                            "Summary: Rob asks for more support engineers.",
                        ),
                    ],
                ),
                label(
                    "meaning.synonymy",
                    "Synonymy / paraphrase",
                    "A near-synonym or paraphrase whose equivalence to the source wording is debatable (strength, "
                    "tone or scope may differ).",
                    [
                        example(
                            "ambiguous",
                            "Source: Jo: the client wasn't thrilled with the proposal. "
                            "Summary: The client was unhappy with the proposal.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Jo: the client postponed the call. Summary: The client delayed the call.",
                        ),
                    ],
                ),
                label(
                    "meaning.structural",
                    "Structural",
                    "The syntax of the sentence allows several readings (attachment, scope of negation or "
                    "quantifiers, coordination) that differ in support.",
                    [
                        example(
                            "ambiguous",
                            "Source: Kay: two of the five reports came in late. "
                            "Summary: All reports were not submitted on time.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Kay: two of the five reports came in late. "
                            "Summary: Not all reports were submitted on time.",
                        ),
                    ],
                ),
                label(
                    "meaning.lexical",
                    "Lexical",
                    "A word in the sentence or the source has several senses, and which sense is meant decides "
                    "whether the sentence is supported.",
                    [
                        example(
                            "ambiguous",
                            "Source: Ben: I move we table the hiring question. "
                            "Summary: Ben wants to postpone the hiring question.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Ben: let's leave the hiring question until next month. "
                            "Summary: Ben wants to postpone the hiring question.",
                        ),
                    ],
                ),
                label(
                    "meaning.vagueness",
                    "Vagueness",
                    "A vague term (many, soon, sharply, some) has no clear threshold, so whether the source meets "
                    "it is a matter of opinion.",
                    [
                        example(
                            "ambiguous",
                            "Source: Fay: sales went from 100 to 112 units. Summary: Sales rose sharply.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Fay: sales went from 100 to 112 units. Summary: Sales rose by 12%.",
                        ),
                    ],
                ),
                label(
                    "meaning.non_assertion",
                    "Non-assertion",
                    "The source (or the sentence) asks, suggests, hedges or speaks hypothetically rather than "
                    "asserts, so it is unclear whether it counts as a claim that supports or is supported.",
                    [
                        example(
                            "ambiguous",
                            "Source: Ana: why don't we move the launch to May? Ben: could work. "
                            "Summary: Ana and Ben agreed to move the launch to May.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Ana: let's move the launch to May. Ben: agreed. "
                            "Summary: Ana and Ben agreed to move the launch to May.",
                        ),
                    ],
                ),
                label(
                    "meaning.other",
                    "Other meaning",
                    "Another meaning-level ambiguity, e.g. a tone or implicature that can be read two ways; "
                    "describe it.",
                    [
                        example(
                            "ambiguous",
                            "Source: Pat: well, these numbers are interesting. Summary: Pat was impressed by the numbers.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Pat: these numbers are impressive. Summary: Pat was impressed by the numbers.",
                        ),
                    ],
                ),
            ],
        ),
        label(
            "context",
            "Context",
            "Whether the sentence is supported depends on how it relates to the source's context: which "
            "condition, time, speaker or passage it belongs to.",
            children=[
                label(
                    "context.decontextualization",
                    "Decontextualization",
                    "The sentence drops context that the source attaches to a statement (a condition, time frame or "
                    "restriction), so read alone it may say more than the source.",
                    [
                        example(
                            "ambiguous",
                            "Source: Ana: for the pilot only, we'll run the survey weekly. "
                            "Summary: The team will run the survey weekly.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Ana: for the pilot only, we'll run the survey weekly. "
                            "Summary: During the pilot, the team will run the survey weekly.",
                        ),
                    ],
                ),
                label(
                    "context.conflation",
                    "Conflation",
                    "Statements from different parts, speakers or events of the source are merged into one claim, "
                    "which may or may not hold as merged.",
                    [
                        example(
                            "ambiguous",
                            "Source: Ben proposed a May launch; later Cara proposed a smaller budget. "
                            "Summary: Ben and Cara proposed a May launch with a smaller budget.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Ben proposed a May launch; later Cara proposed a smaller budget. "
                            "Summary: Ben proposed a May launch and Cara a smaller budget.",
                        ),
                    ],
                ),
                label(
                    "context.other",
                    "Other context",
                    "Another context-level ambiguity, e.g. a later turn revises an earlier one and it is unclear "
                    "which the sentence should be checked against; describe it.",
                    [
                        example(
                            "ambiguous",
                            "Source: Ana: I booked room 4. (later) Ana: hm, maybe we won't need it. "
                            "Summary: Ana booked room 4 for the meeting.",
                        ),
                        example(
                            "non_ambiguous",
                            "Source: Ana: I booked room 4 for the meeting. Summary: Ana booked room 4 for the meeting.",
                        ),
                    ],
                ),
            ],
        ),
        label(
            "other_evaluability",
            "Other evaluability issue",
            "Something outside these types makes the sentence hard to evaluate (e.g. a truncated or garbled "
            "source, missing speaker names); describe it.",
            [
                example(
                    "ambiguous",
                    "Source: Ben: so the final number is — [recording cuts off] Summary: Ben gave the final number.",
                ),
                example(
                    "non_ambiguous",
                    "Source: Ben: so the final number is 40. Summary: Ben gave the final number as 40.",
                ),
            ],
        ),
    ],
}

TAXONOMIES_V2 = [RAMPRASAD_CATEGORIES_V2, MADISSE_AMBIGUITY_V2]


def load(taxonomy_model, label_model, taxonomies=TAXONOMIES_V1, version: int = 1) -> None:
    """Create the given taxonomies at `version` if absent (models passed in: usable from migrations)."""
    for spec in taxonomies:
        taxonomy, created = taxonomy_model.objects.get_or_create(
            slug=spec["slug"],
            version=version,
            defaults={"name": spec["name"], "source": spec["source"], "description": spec["description"]},
        )
        if created:
            _labels(label_model, taxonomy, spec["labels"], parent=None, counter=[0])


def _labels(label_model, taxonomy, labels, parent, counter) -> None:
    for spec in labels:
        counter[0] += 1
        row = label_model.objects.create(
            taxonomy=taxonomy,
            code=spec["code"],
            name=spec["name"],
            parent=parent,
            definition=spec["definition"],
            examples=spec["examples"],
            order=counter[0],
        )
        _labels(label_model, taxonomy, spec["children"], parent=row, counter=counter)
