"""Version 1 of the default prompts, as data, written from the seed papers' appendices.

A data migration loads them; a lead's edit is a new version, so every artefact keeps pointing
at the exact wording that produced it. Placeholders are `{{ name }}` (see models.Prompt).
Every prompt that expects a structured answer says exactly what to write, because the parsers
(llm/parsing.py) refuse anything else rather than guess.
"""


def prompt(slug, kind, name, template, *, system="", source=""):
    return {"slug": slug, "kind": kind, "name": name, "template": template.strip(), "system": system, "source": source}


DEFAULT_PROMPTS = [
    prompt(
        "tofueval-topics",
        "topics",
        "TofuEval topic generation",
        """
Here is a document:

{{ document }}

List the {{ n }} main topics this document discusses. Each topic is a short noun phrase of at
most 8 words that names what part of the document is about (for example "the budget for the new
library"), not a sentence and not a summary. Write one topic per line, numbered "1.", "2.", and
nothing else.
""",
        source="Tang et al. 2024 (TofuEval), Appendix C.1",
    ),
    prompt(
        "tofueval-summary",
        "summary",
        "TofuEval topic-focused summary",
        """
Document:

{{ document }}

Summarize the document above with a focus on the topic "{{ topic }}". The summary must be
shorter than 50 words. Write only the summary.
""",
        source="Tang et al. 2024 (TofuEval), Appendix C.2",
    ),
    prompt(
        "tofueval-judge-sentence",
        "judge_sentence",
        "TofuEval sentence-level judge (direct)",
        """
Decide whether the claim is consistent with the document. The claim is consistent only if
everything it states is supported by the document; otherwise it is inconsistent.

Document:
{{ document }}

Claim:
{{ claim }}

Is the claim consistent with the document? Answer with "yes" or "no" only.
""",
        source="Tang et al. 2024 (TofuEval), Appendix C.3 (DIR)",
    ),
    prompt(
        "tofueval-judge-sentence-explain",
        "judge_sentence",
        "TofuEval sentence-level judge (explanation first)",
        """
Decide whether the claim is consistent with the document. The claim is consistent only if
everything it states is supported by the document; otherwise it is inconsistent.

Document:
{{ document }}

Claim:
{{ claim }}

First explain your reasoning in a few sentences on a line starting with "Explanation:". Then,
on the last line, write "Answer: yes" if the claim is consistent or "Answer: no" if it is not.
""",
        source="Tang et al. 2024 (TofuEval), Appendix C.3 (EXP)",
    ),
    prompt(
        "tofueval-judge-summary",
        "judge_summary",
        "TofuEval summary-level judge (direct)",
        """
Decide whether the summary is consistent with the document. The summary is consistent only if
everything it states is supported by the document; otherwise it is inconsistent.

Document:
{{ document }}

Summary:
{{ summary }}

Is the summary consistent with the document? Answer with "yes" or "no" only.
""",
        source="Tang et al. 2024 (TofuEval), Appendix C.3 (DIR, summary level)",
    ),
    prompt(
        "tofueval-judge-summary-explain",
        "judge_summary",
        "TofuEval summary-level judge (explanation first)",
        """
Decide whether the summary is consistent with the document. The summary is consistent only if
everything it states is supported by the document; otherwise it is inconsistent.

Document:
{{ document }}

Summary:
{{ summary }}

First explain your reasoning in a few sentences on a line starting with "Explanation:". Then,
on the last line, write "Answer: yes" if the summary is consistent or "Answer: no" if it is not.
""",
        source="Tang et al. 2024 (TofuEval), Appendix C.3 (EXP, summary level)",
    ),
    prompt(
        "summedits-edit-consistent",
        "edit_consistent",
        "SummEdits consistent edits",
        """
Document:
{{ document }}

Summary:
{{ seed }}

Write {{ n }} variants of the summary. Each variant changes only a few words (a paraphrase, a
synonym, a reordering) and must stay fully consistent with the document. Write one variant per
line, numbered "1.", "2.", and nothing else.
""",
        source="Laban et al. 2023 (SummEdits), section 5 and Appendix C",
    ),
    prompt(
        "summedits-edit-inconsistent",
        "edit_inconsistent",
        "SummEdits inconsistent edits",
        """
Document:
{{ document }}

Summary:
{{ seed }}

Write {{ n }} variants of the summary. Each variant changes only a few words and introduces one
factual inconsistency with the document: swap an entity, change a number or date, negate a
statement, use an antonym, or add a small unsupported fact. Keep each variant fluent and
plausible. Write one variant per line, numbered "1.", "2.", and nothing else.
""",
        source="Laban et al. 2023 (SummEdits), section 5 and Appendix C",
    ),
    prompt(
        "summedits-edit-types",
        "edit_types",
        "SummEdits edit-type tagging",
        """
A summary was edited. Deleted words are marked <del>like this</del> and inserted words
<ins>like this</ins>:

{{ diff }}

Which kinds of edit are these? Choose one or more of: entity_modification, antonym_swap,
hallucinated_fact_insertion, negation_insertion_removal, other. Answer with the chosen codes
separated by commas and nothing else.
""",
        source="Laban et al. 2023 (SummEdits), section 6.3",
    ),
    prompt(
        "summedits-judge",
        "summedits_judge",
        "SummEdits zero-shot judge",
        """
Document:
{{ document }}

Summary:
{{ summary }}

Decide if the summary is consistent with the document: every piece of information in the
summary must be supported by the document. Answer with "yes" or "no" only.
""",
        source="Laban et al. 2023 (SummEdits), section 6 (zero-shot prompt)",
    ),
    prompt(
        "madisse-debate-agent",
        "debate_agent",
        "MADISSE debate agent",
        """
You take part in a debate about whether a summary sentence is consistent with a document.
You start out holding that the sentence is {{ stance }}; argue for it honestly, but change your
mind if the other arguments convince you.

Document:
{{ document }}

Summary:
{{ summary }}

Sentence under debate:
{{ sentence }}

Arguments so far:
{{ history }}

Give your argument in a few sentences on a line starting with "Argument:". Then, on the last
line, write "Verdict: consistent" or "Verdict: inconsistent".
""",
        source="Koupaee et al. (MADISSE), section 3, debate with initial stance",
    ),
    prompt(
        "madisse-adjudicator",
        "debate_adjudicator",
        "MADISSE adjudicator",
        """
Several agents debated whether a summary sentence is consistent with a document.

Document:
{{ document }}

Sentence:
{{ sentence }}

Debate:
{{ history }}

Weigh the arguments, not the number of agents. On the last line write "Verdict: consistent" or
"Verdict: inconsistent".
""",
        source="Koupaee et al. (MADISSE), section 3, adjudication",
    ),
    prompt(
        "madisse-ambiguity",
        "ambiguity",
        "MADISSE ambiguity detection",
        """
Document:
{{ document }}

Summary:
{{ summary }}

Sentence:
{{ sentence }}

Is there an ambiguity in the sentence, relative to the document, that makes it hard to decide
whether it is consistent (for example implicit reasoning, a vague or underspecified meaning,
or missing context)? Describe the issue briefly on a line starting with "Description:" (or
"Description: none"), then on the last line write "Ambiguous: yes" or "Ambiguous: no".
""",
        source="Koupaee et al. (MADISSE), section 4 and Appendix B",
    ),
    prompt(
        "madisse-ambiguity-from-debate",
        "ambiguity_from_debate",
        "MADISSE ambiguity from debate arguments",
        """
Agents disagreed about whether this sentence is consistent with its document.

Sentence:
{{ sentence }}

Their arguments:
{{ history }}

Does the disagreement come from an ambiguity in the sentence (rather than from an error by one
side)? Describe it briefly on a line starting with "Description:" (or "Description: none"),
then on the last line write "Ambiguous: yes" or "Ambiguous: no".
""",
        source="Koupaee et al. (MADISSE), section 4.2",
    ),
]
