"""Version 1 of the four taxonomies of the seed papers, as data.

Definitions are written from the papers' appendices (TofuEval App. G, Ramprasad et al. App. A,
MADISSE Table 6, SummEdits section 5) in our words; a data migration loads them. A change of
wording or labels is a new version in a new migration, so earlier judgments keep their meaning.
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
