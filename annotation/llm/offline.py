"""The offline provider: topics, summaries and SummEdits-style edits without a model.

Used on machines without an LLM endpoint, and as a labelled baseline. Everything here is plain,
deterministic Python (no Django, no network): the same input and ``rng_seed`` give the same output.

- ``topics``: frequent, well-spread keyword phrases (TofuEval-style short noun phrases).
- ``summary``: an extractive, topic-focused summary within a word budget.
- ``edits``: FactCC-style rule-based minor edits of a seed summary (Kryscinski et al. 2020), of
  both kinds as in SummEdits (Laban et al. 2023): inconsistent swaps/negations and consistent
  paraphrases, each at most ``MAX_EDIT_DISTANCE`` words away from the seed.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass

import pysbd

MAX_EDIT_DISTANCE = 4
CONSISTENT, INCONSISTENT = "consistent", "inconsistent"
INCONSISTENT_KINDS = ("entity_swap", "number_swap", "date_swap", "pronoun_swap", "negation", "antonym_swap")
CONSISTENT_KINDS = ("paraphrase",)

# A word: a number with its separators ("14,000", "3.5") or letters/digits joined by apostrophes
# and hyphens ("didn't", "Neuro-Symbolic"). Punctuation and emoji are not words.
_WORD = re.compile(r"\d+(?:[.,]\d+)*(?![^\W_])|[^\W_]+(?:['’\-][^\W_]+)*")
_SPEAKER = re.compile(r"^\s*(?:[A-Z][\w.'’\-]*(?: [\w.'’\-]+){0,3}|Speaker \d+)\s*:\s+(?=\S)")
_CLAUSE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"“”«»…—–/]|\s-\s")


def _words(text: str) -> list[str]:
    return text.split()


_STOPWORDS = frozenset(
    _words("""a about above after again against all am an and any are aren't as at be because been before being below
    between both but by can cannot could did do does doing don't down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself let's me more most my myself no
    nor not of off on once only or other ought our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves also just may might
    must shall us upon within without via per etc""")
)
# Words that are frequent in dialogues and meetings but never a topic on their own.
_FILLERS = frozenset(
    _words("""yes yeah okay ok um uh oh hi hello well right really actually basically sure thank thanks please like know
    think want going get got go make made say said says tell told see look come take need let mean way thing things lot
    lots kind sort today tonight now good great much many one two three four five six seven eight nine ten first last
    next whereas motion second item agenda mayor madam councilmember councilmembers member members chair clerk speaker
    meeting everyone everybody somebody something anything nothing people guys time year years day days week weeks
    would could should little bit able help ask asked call called work use used try give put keep find show feel seem
    talk move sweet absolutely definitely perfect understood interested wonderful happy glad""")
)
_HONORIFICS = frozenset(_words("mr mrs ms dr prof st jr sr vs no"))
_WEEKDAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
_MONTHS = _words("January February March April May June July August September October November December")
_NUMBER_WORDS = _words("zero one two three four five six seven eight nine ten eleven twelve")
_YEAR = re.compile(r"^(1[89]\d\d|20\d\d)$")

# Inconsistent word swaps; each pair works both ways, verb pairs also in their -s/-ed/-ing forms.
_ANTONYMS = """increase:decrease+ approve:reject+ open:close+ start:stop+ agree:disagree+ support:oppose+
allow:prohibit+ include:exclude+ accept:refuse+ succeed:fail+ arrive:depart+ love:hate+ add:remove+ hire:dismiss+
strengthen:weaken+ improve:worsen+ push:pull+ win:lose won:lost winning:losing buy:sell bought:sold send:receive
sends:receives teach:learn teaches:learns remember:forget expand:shrink before:after more:less most:least
higher:lower high:low large:small big:little long:short early:late earlier:later first:last profit:loss
profits:losses positive:negative true:false success:failure successes:failures strong:weak easy:difficult
simple:complex cheap:expensive new:old rich:poor good:bad better:worse best:worst always:never many>few above:below
inside:outside public:private internal:external maximum:minimum majority:minority input:output import:export
happy:sad safe:dangerous legal:illegal possible:impossible necessary:unnecessary able:unable likely:unlikely
common:rare often:rarely fast:slow quickly:slowly hot:cold wet:dry full:empty victory:defeat mandatory:optional
temporary:permanent formal:informal visible:invisible relevant:irrelevant consistent:inconsistent explicit:implicit
without>with wide:narrow comprehensive:basic specific:general same>different similar:dissimilar
interested:uninterested satisfied:dissatisfied accurate:inaccurate efficient:inefficient effective:ineffective
highest:lowest largest:smallest morning:evening north:south east:west man:woman men:women boy:girl male:female
husband:wife father:mother son:daughter brother:sister at_least:at_most"""
# Consistent swaps: "a>b" works one way only (the reverse has a noun reading), "a:b" both ways.
_SYNONYMS = """said>stated says>states buy>purchase buys>purchases bought>purchased big:large also:additionally
assist>help assists>helps assisted>helped helps>assists helped>assisted begin>start begins>starts began>started
started>began utilize>use utilizes>uses utilized>used demonstrate>show demonstrates>shows demonstrated>showed
quick:rapid quickly:rapidly maybe:perhaps often:frequently however:nevertheless therefore:thus important:significant
main:primary whole:entire method>approach methods>approaches goal>objective goals>objectives problem>issue
problems>issues outcome>result outcomes>results options:choices car:automobile cars:automobiles
understand:comprehend huge:enormous fix:repair build:construct builds:constructs built:constructed propose:suggest
proposes:suggests proposed:suggested empower:enable empowers:enables simply:merely affordable:inexpensive
customer:client customers:clients obtain:acquire respond>reply responds>replies replied:responded
approximately:roughly among:amongst whilst>while additional:extra mistake:error mistakes:errors examine:inspect
range_of>variety_of recommend>suggest recommends>suggests recommended>suggested recommending>suggesting
expensive>costly specific>particular discuss>talk_about discusses>talks_about discussed>talked_about
discussing>talking_about potential>prospective difference>distinction differences>distinctions questions>queries
solve>resolve solves>resolves solved>resolved individuals>people situations>circumstances
in_order_to>to because_of>due_to due_to>because_of as_well_as>and such_as>like at_the_moment>currently
currently>at_present is_able_to>can are_able_to>can was_able_to>could a_number_of>several prior_to>before"""
_CONTRACTIONS = """did_not:didn't do_not:don't does_not:doesn't is_not:isn't are_not:aren't was_not:wasn't
were_not:weren't will_not:won't cannot:can't has_not:hasn't have_not:haven't had_not:hadn't would_not:wouldn't
could_not:couldn't should_not:shouldn't it_is>it's i_am:i'm we_are:we're they_are:they're you_are:you're"""
_PRONOUNS = {"he": "she", "she": "he", "him": "her", "his": "her", "her": "his", "hers": "his", "himself": "herself"}
_PRONOUNS |= {"herself": "himself", "we": "they", "they": "we", "our": "their", "their": "our", "us": "them"}
_PRONOUNS |= {"them": "us", "ours": "theirs", "theirs": "ours", "ourselves": "themselves", "themselves": "ourselves"}
_AUX = frozenset(_words("is was are were will can could would should must did does do has have had may might shall"))
_WH_WORDS = frozenset(_words("how what why where when who which whom whose"))
_PERFECT_AUX = frozenset(_words("has have had"))
_SUBJECTS = frozenset(_words("he she it they we i you who which that"))
_OBJECT_STARTERS = frozenset(
    _words("the a an his her their its our my your him them us me it that to this these those")
)
_IRREGULAR_PAST = dict(
    pair.split(":")
    for pair in _words("""said:say made:make took:take gave:give found:find told:tell thought:think came:come went:go got:get
    knew:know saw:see began:begin chose:choose paid:pay sold:sell bought:buy brought:bring kept:keep held:hold
    felt:feel met:meet sent:send spent:spend won:win built:build wrote:write ran:run led:lead""")
)
_E_VERBS = frozenset(
    _words("""agree approve arrange believe care change close complete continue create date decide decline describe determine
    emerge encourage evaluate explore face force generate hope improve include increase decrease introduce involve
    like live love manage move note place prepare produce propose provide purchase raise realize receive reduce
    release remove require resolve save serve share state use vote argue cause charge compare combine define guide
    indicate issue measure operate promote pursue recognize replace secure structure achieve advertise analyze
    appreciate examine execute facilitate hire retire schedule solve value translate""")
)
_FILLER_ADVERBS = frozenset(_words("very really simply quite actually basically indeed truly certainly also"))


def word_tokens(text: str) -> list[str]:
    """The words of ``text`` in order, case kept, punctuation and emoji dropped."""
    return _WORD.findall(text or "")


def word_edit_distance(a: str, b: str) -> int:
    """Levenshtein distance between the word sequences of ``a`` and ``b`` (case-sensitive)."""
    return _levenshtein(word_tokens(a), word_tokens(b))


def _levenshtein(x: list[str], y: list[str], limit: int | None = None) -> int:
    """Word Levenshtein; with ``limit``, only a band of the table is filled and anything above the
    limit comes back as ``limit + 1`` (edits are checked against a small bound, often)."""
    while x and y and x[0] == y[0]:  # edits are local: trim the shared ends first
        x, y = x[1:], y[1:]
    while x and y and x[-1] == y[-1]:
        x, y = x[:-1], y[:-1]
    band = len(x) + len(y) if limit is None else limit
    if abs(len(x) - len(y)) > band:
        return band + 1
    previous = [j if j <= band else band + 1 for j in range(len(y) + 1)]
    for i, xi in enumerate(x, 1):
        current = [band + 1] * (len(y) + 1)
        current[0] = min(i, band + 1)
        for j in range(max(1, i - band), min(len(y), i + band) + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (xi != y[j - 1]))
        if min(current) > band:
            return band + 1
        previous = current
    return min(previous[-1], band + 1)


def _stem(word: str) -> str:
    """Crude suffix stripping so that "permits"/"permit" and "parking"/"parked" meet."""
    word = word.lower()
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def _dialogue_lines(document: str) -> list[str] | None:
    """The lines' texts without their "Speaker:" labels, or None when the text is not a dialogue."""
    lines = [line for line in document.splitlines() if line.strip()]
    labelled = [bool(_SPEAKER.match(line)) for line in lines]
    if not lines or sum(labelled) * 2 < len(lines):
        return None
    return [_SPEAKER.sub("", line, count=1).strip() for line in lines]


def _units(document: str) -> list[str]:
    """Dialogue turns' texts, or prose paragraphs with hard line breaks joined."""
    lines = _dialogue_lines(document)
    if lines is not None:
        return lines
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", document) if p.strip()]


def _sentences(document: str) -> list[str]:
    segmenter = pysbd.Segmenter(language="en", clean=False)
    return [s.strip() for unit in _units(document) for s in segmenter.segment(unit) if s.strip()]


# --- topics -------------------------------------------------------------------------------------


def _is_topic_word(word: str) -> bool:
    return (
        len(word) >= 3
        and any(c.isalpha() for c in word)
        and word not in _STOPWORDS
        and word not in _FILLERS
        and not word.endswith("ly")
        and not (word.endswith("ed") and not word.endswith("eed") and len(word) > 4)  # past tense, not a noun
        and "'" not in word
        and "’" not in word
    )


def _phrase_stats(document: str) -> tuple[dict[str, list[int]], int]:
    """phrase -> [count, first position, last position] for 1-3 word runs of topic words."""
    stats: dict[str, list[int]] = {}
    position = 0
    for unit in _units(document):
        for clause in _CLAUSE_BREAK.split(unit):
            run: list[str] = []
            for token in [*word_tokens(clause.lower()), ""]:  # "" flushes the last run
                if token and _is_topic_word(token):
                    run.append(token)
                    position += 1
                    continue
                for size in (1, 2, 3):
                    for start in range(len(run) - size + 1):
                        phrase = " ".join(run[start : start + size])
                        at = position - len(run) + start
                        entry = stats.setdefault(phrase, [0, at, at])
                        entry[0], entry[2] = entry[0] + 1, at
                run = []
                position += bool(token)
    return stats, max(position, 1)


def topics(document: str, n: int = 3) -> list[str]:
    """Up to ``n`` keyword topics of ``document`` (prose or "Speaker: text" dialogue), best first.

    How: speaker labels are dropped, the text is lowercased and cut at punctuation into clauses,
    and every clause into runs of consecutive content words (not stopwords, fillers such as
    "okay"/"motion"/"thank", adverbs in -ly, past tenses in -ed, numbers or words under 3
    letters). Every 1-3 word sub-run is a candidate phrase, scored

        count x (1 + 0.5 x spread + 0.2 x earliness) x (1 + 0.5 x (words - 1) if count > 1 else 1)

    where spread is the distance between its first and last occurrence as a share of the text and
    earliness is how early it first occurs: repeated, spread-out, longer phrases win. Phrases are
    taken best first, skipping one contained (word-wise, on stems) in an already taken phrase, so
    "permits" after "permit". A phrase that contains or overlaps taken ones ("parking" ->
    "parking permit"; "downtown alameda business" + "alameda business association") replaces them,
    joined, when it occurs at least twice and at least half as often as each and the join occurs in
    the text with at most 4 words; otherwise it is skipped. Ties go to the earlier phrase.
    """
    stats, total = _phrase_stats(document or "")

    def score(item: tuple[str, list[int]]) -> tuple[float, int]:
        phrase, (count, first, last) = item
        words = phrase.count(" ") + 1
        length_bonus = 1 + 0.5 * (words - 1) if count > 1 else 1.0
        return (-count * (1 + 0.5 * (last - first) / total + 0.2 * (1 - first / total)) * length_bonus, first)

    chosen: list[str] = []
    seen_stems: set[tuple[str, ...]] = set()
    flat = f" {' '.join(word_tokens((document or '').lower()))} "
    for phrase, (count, _, _) in sorted(stats.items(), key=score):
        stems = tuple(_stem(w) for w in phrase.split())
        key = " ".join(stems)  # compare stems: "parking permits cost" contains "parking permit"
        if stems in seen_stems or any(f" {key} " in f" {_stem_key(c)} " for c in chosen):
            continue
        related = [c for c in chosen if _join(_stem_key(c), key)]
        if related and (count < 2 or any(count * 2 < stats[c][0] for c in related)):
            continue
        merged = phrase
        for c in related:
            merged = _join(c, merged) or merged
        if related and (len(merged.split()) > 4 or f" {merged} " not in flat):
            continue
        if len(chosen) - len(related) >= n:
            break
        at = chosen.index(related[0]) if related else len(chosen)
        chosen = [c for c in chosen[:at] if c not in related] + [merged] + [c for c in chosen[at:] if c not in related]
        seen_stems.add(stems)
    return chosen


def _stem_key(phrase: str) -> str:
    return " ".join(_stem(w) for w in phrase.split())


def _join(old: str, new: str) -> str | None:
    """``new`` grown to cover ``old`` when they overlap word-wise ("a b" + "a b c", "a b c" + "b c d")."""
    a, b = old.split(), new.split()
    if f" {old} " in f" {new} ":
        return new
    for size in range(min(len(a), len(b)) - 1, 0, -1):
        if a[-size:] == b[:size]:
            return " ".join(a + b[size:])
        if b[-size:] == a[:size]:
            return " ".join(b + a[size:])
    return None


# --- summary ------------------------------------------------------------------------------------


def summary(document: str, topic: str, max_words: int = 50) -> str:
    """An extractive summary of ``document`` focused on ``topic``, at most ``max_words`` words.

    Sentences (pysbd; each dialogue turn's text without its speaker label) that contain a topic
    stem score the number of distinct topic stems they contain plus 0.3 x that of each neighbour
    (context makes a sentence likelier on-topic). The best are taken while they fit the budget
    (skipping ones that do not) and given in document order. With no topic match the lead is
    taken: the first sentences, in order, while they fit. When not even one fits, the best is cut at a word
    boundary and ends with "…". Words are whitespace-separated; non-empty input gives non-empty text.
    """
    if max_words < 1:
        raise ValueError("max_words must be at least 1")
    sentences = _sentences(document or "")
    if not sentences:
        return ""
    wanted = {_stem(w) for w in word_tokens(topic.lower()) if w not in _STOPWORDS}
    own = [len(wanted & {_stem(w) for w in word_tokens(s)}) for s in sentences]
    padded = [0, *own, 0]
    scores = [own[i] + 0.3 * (padded[i] + padded[i + 2]) for i in range(len(sentences))]
    on_topic = [i for i in range(len(sentences)) if own[i]]
    ranked = sorted(on_topic, key=lambda i: (-scores[i], i)) or list(range(len(sentences)))
    chosen, used = [], 0
    for i in ranked:
        size = len(sentences[i].split())
        if used + size <= max_words:
            chosen.append(i)
            used += size
        elif not on_topic:
            break  # the lead is a prefix of the text
    if not chosen:
        words = sentences[ranked[0]].split()[:max_words]
        words[-1] = words[-1].rstrip(",;:.!?-—–") or words[-1]
        return " ".join(words) + "…"
    return " ".join(sentences[i] for i in sorted(chosen))


# --- edits --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    text: str
    kind: str
    expected: str  # "consistent" | "inconsistent"
    note: str


@dataclass(frozen=True)
class _Op:
    """Replace seed[start:end] with ``new``."""

    start: int
    end: int
    new: str
    kind: str
    note: str

    @property
    def expected(self) -> str:
        return CONSISTENT if self.kind in CONSISTENT_KINDS else INCONSISTENT


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    text: str
    lower: str
    sentence_start: bool


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in _WORD.finditer(text):
        previous = tokens[-1] if tokens else None
        gap = text[previous.end if previous else 0 : m.start()].rstrip(" \t\"'“‘([")
        start = previous is None or (gap[-1:] in tuple(".!?:;…\n") and previous.lower not in _HONORIFICS)
        tokens.append(_Token(m.start(), m.end(), m.group(), m.group().lower(), start))
    return tokens


def _case_like(source: str, word: str) -> str:
    if len(source) > 1 and source.isupper():
        return word.upper()
    return word[:1].upper() + word[1:] if source[:1].isupper() else word


def _pairs(table: str) -> dict[str, str]:
    """ "a:b" both ways, "a>b" one way, "a:b+" also in -s/-ed/-ing forms; "_" stands for a space."""
    mapping: dict[str, str] = {}
    for entry in table.split():
        a, sep, b = re.split("([:>])", entry.replace("_", " ").rstrip("+"))
        suffixes = ("", "s", "ed", "ing") if entry.endswith("+") else ("",)
        for suffix in suffixes:
            mapping.setdefault(_inflect(a, suffix), _inflect(b, suffix))
            if sep == ":":
                mapping.setdefault(_inflect(b, suffix), _inflect(a, suffix))
    return mapping


def _inflect(base: str, suffix: str) -> str:
    if not suffix:
        return base
    if suffix in ("ed", "ing") and base.endswith("e"):
        return base[:-1] + suffix
    if suffix in ("s", "ed") and re.search(r"[^aeiou]y$", base):
        return base[:-1] + ("ies" if suffix == "s" else "ied")
    if suffix == "s" and re.search(r"(s|sh|ch|x|z)$", base):
        return base + "es"
    if suffix in ("ed", "ing") and re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", base):
        return base + base[-1] + suffix  # stop -> stopped, win -> winning
    return base + suffix


_ANTONYM_FORMS = _pairs(_ANTONYMS)
_SYNONYM_FORMS = _pairs(_SYNONYMS)
_CONTRACTION_FORMS = _pairs(_CONTRACTIONS)


def _phrase_regex(phrases) -> re.Pattern[str]:
    alternatives = sorted((re.escape(p).replace("'", "['’]") for p in phrases), key=len, reverse=True)
    return re.compile(r"(?<![\w'’\-])(?:" + "|".join(alternatives).replace(r"\ ", r"\s+") + r")(?![\w'’\-])", re.I)


_ANTONYM_RE = _phrase_regex(_ANTONYM_FORMS)
_SYNONYM_RE = _phrase_regex(_SYNONYM_FORMS)
_CONTRACTION_RE = _phrase_regex(_CONTRACTION_FORMS)


def _table_ops(seed: str, regex: re.Pattern[str], mapping: dict[str, str], kind: str, label: str) -> list[_Op]:
    starts = {t.start for t in _tokens(seed) if t.sentence_start}
    ops = []
    for m in regex.finditer(seed):
        found = m.group()
        if found[:1].isupper() and m.start() not in starts and not found.isupper() and kind != "paraphrase":
            continue  # a proper name ("New York"), not the word
        key = " ".join(found.lower().replace("’", "'").split())
        new = _case_like(found, mapping[key])
        if "’" in found:
            new = new.replace("'", "’")
        ops.append(_Op(m.start(), m.end(), new, kind, f"{label}: '{found}' -> '{new}'"))
    return ops


_NOT_NAMES = _STOPWORDS | _HONORIFICS


def _entities(text: str, known: set[str]) -> list[tuple[int, int, str]]:
    """Capitalised name spans (1-3 words); a sentence-initial word counts only if in ``known``."""
    spans, current = [], []
    for t in [*_tokens(text), None]:
        is_name = (
            t is not None
            and t.text[:1].isupper()
            and re.split("['’]", t.lower)[0] not in _NOT_NAMES
            and t.text not in _WEEKDAYS + _MONTHS
            and text[t.start - 1 : t.start] not in ("$", "£", "€")  # "$XXX" is a placeholder amount
            and (not t.sentence_start or t.text in known)
        )
        if is_name and current and text[current[-1].end : t.start] == " ":
            current.append(t)
            continue
        if current and len(current) <= 3:
            end = current[-1].end - (2 if current[-1].lower.endswith(("'s", "’s")) else 0)
            spans.append((current[0].start, end, text[current[0].start : end]))
        current = [t] if is_name else []
    return spans


def _mid_sentence_caps(text: str) -> set[str]:
    return {t.text for t in _tokens(text) if t.text[:1].isupper() and not t.sentence_start}


def _same_referent(a: str, b: str, texts: str) -> bool:
    """ "Neuro-Symbolic Concept Learner" and "NS-CL" name one thing: an acronym, or "a (b)" in the texts."""
    short, long = sorted((a, b), key=len)
    initials = "".join(part[0] for part in re.split(r"[\s\-]+", long) if part)
    if short.isupper() and re.sub(r"\W", "", short).lower() == initials.lower():
        return True
    return f"{a} ({b}" in texts or f"{b} ({a}" in texts


def _neighbours(text: str, start: int, end: int) -> set[str]:
    """The lowercase words just before and after text[start:end], marked by side."""
    before, after = word_tokens(text[max(0, start - 40) : start])[-1:], word_tokens(text[end : end + 40])[:1]
    return {f"<{w.lower()}" for w in before} | {f">{w.lower()}" for w in after}


def _entity_ops(seed: str, document: str) -> list[_Op]:
    document = "\n".join(_units(document))  # without speaker labels
    known = _mid_sentence_caps(seed) | _mid_sentence_caps(document)
    seed_names = _entities(seed, known)
    doc_names = _entities(document, known)
    counts = Counter(name for _, _, name in doc_names)
    contexts: dict[str, set[str]] = {}  # words around a name: "Gold plan" and "Silver plan" share "plan"
    for text, names in ((document, doc_names), (seed, seed_names)):
        for start, end, name in names:
            contexts.setdefault(name, set()).update(_neighbours(text, start, end))
    ops = []
    for start, end, name in seed_names:
        words = set(name.lower().split())
        mine = _neighbours(seed, start, end)
        candidates = [
            other
            for other in dict.fromkeys([*counts, *(n for _, _, n in seed_names)])
            if words.isdisjoint(other.lower().split()) and not _same_referent(name, other, seed + document)
        ]
        candidates.sort(key=lambda o: (-len(mine & contexts[o]), -counts[o]))  # stable: ties keep first-seen order
        sharing = sum(bool(mine & contexts[o]) for o in candidates)
        for other in candidates[: min(4, max(2, sharing)) if sharing else 4]:
            source = "document" if other in counts else "seed"
            ops.append(_Op(start, end, other, "entity_swap", f"entity: '{name}' -> '{other}' (from the {source})"))
    return ops


def _nearby_numbers(text: str) -> list[str]:
    if "." in text:
        head, tail = text.rsplit(".", 1)
        last = int(tail[-1])
        return [f"{head}.{tail[:-1]}{d}" for d in ((last + 1) % 10, (last - 1) % 10)]
    value = int(text.replace(",", ""))
    values = [value + 1, value - 1, value * 2, value + 10]
    fmt = "{:,}" if "," in text else "{}"
    return [fmt.format(v) for v in values if v >= 0 and v != value]


def _is_number(word: str) -> bool:
    return bool(re.fullmatch(r"[0-9]+(?:[.,][0-9]+)*", word)) and not _YEAR.match(word)


def _number_ops(seed: str, document: str) -> list[_Op]:
    document = "\n".join(_units(document))  # "Speaker 1:" labels are not numbers of the story
    doc_numbers = list(dict.fromkeys(t for t in word_tokens(document) if _is_number(t)))
    doc_words = [w for w in _NUMBER_WORDS[2:] if re.search(rf"\b{w}\b", document, re.I)]
    ops = []
    for t in _tokens(seed):
        if _is_number(t.text):
            options = [d for d in doc_numbers if d != t.text][:2] + _nearby_numbers(t.text)
        elif t.lower in _NUMBER_WORDS[2:]:
            value = _NUMBER_WORDS.index(t.lower)
            near = [_NUMBER_WORDS[v] for v in (value + 1, value - 1) if 2 <= v <= 12]
            options = [_case_like(t.text, w) for w in [*doc_words[:2], *near] if w != t.lower]
        else:
            continue
        for new in list(dict.fromkeys(options))[:4]:
            ops.append(_Op(t.start, t.end, new, "number_swap", f"number: '{t.text}' -> '{new}'"))
    return ops


def _date_ops(seed: str, document: str) -> list[_Op]:
    ops = []
    for t in _tokens(seed):
        for names in (_WEEKDAYS, _MONTHS):
            if t.text in names and not (t.text == "May" and t.sentence_start):
                here = names.index(t.text)
                neighbours = [names[(here + 1) % len(names)], names[here - 1]]
                options = [n for n in names if n != t.text and re.search(rf"\b{n}\b", document)] + neighbours
                break
        else:
            if not _YEAR.match(t.text):
                continue
            year = int(t.text)
            options = [y for y in re.findall(r"\b(?:1[89]\d\d|20\d\d)\b", document) if y != t.text]
            options += [str(year + 1), str(year - 1)]
        for new in list(dict.fromkeys(options))[:3]:
            ops.append(_Op(t.start, t.end, new, "date_swap", f"date: '{t.text}' -> '{new}'"))
    return ops


def _pronoun_ops(seed: str) -> list[_Op]:
    tokens, ops = _tokens(seed), []
    for i, t in enumerate(tokens):
        head, _, tail = t.lower.replace("’", "'").partition("'")
        if head not in _PRONOUNS or t.text == "US" or (tail and tail not in ("s", "d", "ll", "re", "ve")):
            continue
        new = _PRONOUNS[head]
        if head == "her":  # possessive before a content word, else object
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            possessive = following and seed[t.end : following.start] == " " and following.lower not in _STOPWORDS
            new = "his" if possessive else "him"
        new = _case_like(t.text, new) + t.text[len(head) :]
        ops.append(_Op(t.start, t.end, new, "pronoun_swap", f"pronoun: '{t.text}' -> '{new}'"))
    return ops


def _lemma(word: str, vocabulary: set[str]) -> str | None:
    """Base form of a regular -ed / -s verb, checked against the text's vocabulary where possible."""
    if word in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[word]
    if word.endswith("ied") or (word.endswith("ies") and len(word) > 4):
        return word[:-3] + "y"
    if word.endswith("ed"):
        base = word[:-2]
        if word[:-1] in _E_VERBS or word[:-1] in vocabulary:
            return word[:-1]
        if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsfz":
            return base[:-1]  # stopped -> stop
        # English words rarely end in these; the verb had a silent e: moved, produced, advised, updated
        return base + "e" if re.search(r"(v|c|dg|z|[aiou]s|[^aeiou]ur|[^aeo]at|[^aeioul]l)$", base) else base
    if re.search(r"(ss|sh|ch|x|z|o)es$", word):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else None


def _verb_negation(tokens: list[_Token], i: int, seed: str, vocabulary: set[str]) -> _Op | None:
    """ "covers" -> "does not cover" after he/she/it/that...; "called the" -> "did not call the"."""
    t = tokens[i]
    prev = tokens[i - 1] if i else None
    following = tokens[i + 1] if i + 1 < len(tokens) else None
    if prev is None or following is None or not t.text.isalpha() or t.lower in _STOPWORDS or len(t.lower) < 4:
        return None
    adjacent = seed[prev.end : t.start] == " "
    if t.lower.endswith("s") and prev.lower in ("he", "she", "it", "who", "which", "that", "this") and adjacent:
        lemma, aux = _lemma(t.lower, vocabulary), "does"
    elif t.lower.endswith("ed") or t.lower in _IRREGULAR_PAST:
        subject = prev.lower in _SUBJECTS or (prev.lower not in _STOPWORDS and adjacent and prev.text.isalpha())
        objectish = following.lower in _OBJECT_STARTERS or following.text[:1].isupper()
        if not (subject and objectish) or prev.lower in _AUX:
            return None
        lemma, aux = _lemma(t.lower, vocabulary), "did"
    else:
        return None
    if not lemma or len(lemma) < 2:
        return None
    new = f"{aux} not {lemma}"
    return _Op(t.start, t.end, new, "negation", f"negation: '{t.text}' -> '{new}'")


def _after_question_word(tokens: list[_Token], i: int) -> bool:
    """ "How can we ..." is a question: "How cannot we" is not English."""
    return i > 0 and tokens[i - 1].sentence_start and tokens[i - 1].lower in _WH_WORDS


def _negation_ops(seed: str, document: str) -> list[_Op]:
    tokens, ops = _tokens(seed), []
    vocabulary = {w.lower() for w in word_tokens(seed + " " + document)}
    for i, t in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        low = t.lower.replace("’", "'")
        if low.endswith("n't") and low != "ain't" or low == "cannot":
            base = {"won't": "will", "can't": "can", "shan't": "shall", "cannot": "can"}.get(low, t.text[:-3])
            ops.append(_Op(t.start, t.end, _case_like(t.text, base), "negation", f"negation removed: '{t.text}'"))
        elif low in _AUX and following and following.lower in ("not", "never"):
            ops.append(_Op(t.end, following.end, "", "negation", f"negation removed: '{following.text}'"))
        elif low in _AUX and following and t.text.islower() and not _after_question_word(tokens, i):
            if low in _PERFECT_AUX and not re.search(
                r"(ed|en)$|^(been|done|made|had|got|paid|sold|won)$", following.lower
            ):
                continue  # "has a plan" is not a perfect tense
            if low in ("do", "does", "did") and (following.lower in _STOPWORDS or following.text[:1].isupper()):
                continue
            new = "cannot" if low == "can" else f"{t.text} not"
            ops.append(_Op(t.start, t.end, new, "negation", f"negation: '{t.text}' -> '{new}'"))
        elif low == "never" and following and i:
            ops.append(_Op(tokens[i - 1].end, t.end, "", "negation", "negation removed: 'never'"))
        elif op := _verb_negation(tokens, i, seed, vocabulary):
            ops.append(op)
    return ops


def _number_format_ops(seed: str) -> list[_Op]:
    ops = []
    for t in _tokens(seed):
        before, after = seed[t.start - 1 : t.start], seed[t.end : t.end + 1]
        if before not in ("", " ") or after not in ("", " ", ",", ".", ";", ":", ")"):
            continue
        if t.text.isascii() and t.text.isdigit() and 2 <= int(t.text) <= 12:
            new = _case_like(t.text, _NUMBER_WORDS[int(t.text)])
        elif t.lower in _NUMBER_WORDS[2:]:
            new = str(_NUMBER_WORDS.index(t.lower))
        else:
            continue
        ops.append(_Op(t.start, t.end, new, "paraphrase", f"number format: '{t.text}' -> '{new}'"))
    return ops


def _filler_ops(seed: str) -> list[_Op]:
    tokens = _tokens(seed)
    return [
        _Op(tokens[i - 1].end, t.end, "", "paraphrase", f"filler dropped: '{t.text}'")
        for i, t in enumerate(tokens)
        if i and t.lower in _FILLER_ADVERBS and seed[tokens[i - 1].end : t.start] == " "
    ]


def _list_order_ops(seed: str) -> list[_Op]:
    """ "theft and vandalism," -> "vandalism and theft,": two single-word conjuncts closing a clause."""
    tokens, ops = _tokens(seed), []
    for i in range(1, len(tokens) - 1):
        x, conj, y = tokens[i - 1], tokens[i], tokens[i + 1]
        before = seed[tokens[i - 2].end : x.start] if i > 1 else ""
        after = seed[y.end : tokens[i + 2].start] if i + 2 < len(tokens) else "."
        opens = i == 1 or tokens[i - 2].lower in _STOPWORDS or bool(re.search(r"[,;:(]", before))
        content = all(w.text.isalpha() and w.lower not in _STOPWORDS and w.text.islower() for w in (x, y))
        spaced = seed[x.end : conj.start] == " " == seed[conj.end : y.start]
        if conj.lower in ("and", "or") and content and spaced and opens and re.match(r"\s*[,;:.!?)]", after):
            new = f"{y.text} {conj.text} {x.text}"
            ops.append(_Op(x.start, y.end, new, "paraphrase", f"list order: '{seed[x.start : y.end]}' -> '{new}'"))
    return ops


def _all_ops(seed: str, document: str) -> list[_Op]:
    return [
        *_entity_ops(seed, document),
        *_number_ops(seed, document),
        *_date_ops(seed, document),
        *_pronoun_ops(seed),
        *_negation_ops(seed, document),
        *_table_ops(seed, _ANTONYM_RE, _ANTONYM_FORMS, "antonym_swap", "antonym"),
        *_table_ops(seed, _SYNONYM_RE, _SYNONYM_FORMS, "paraphrase", "synonym"),
        *_table_ops(seed, _CONTRACTION_RE, _CONTRACTION_FORMS, "paraphrase", "contraction"),
        *_number_format_ops(seed),
        *_filler_ops(seed),
        *_list_order_ops(seed),
    ]


def _apply(seed: str, ops: tuple[_Op, ...]) -> str:
    text = seed
    for op in sorted(ops, key=lambda o: o.start, reverse=True):
        text = text[: op.start] + op.new + text[op.end :]
    return text


def _round_robin(pool: list[Edit], k: int, rng: random.Random) -> list[Edit]:
    """k edits taking each kind in turn, in a seeded order, so no kind crowds out the others."""
    by_kind: dict[str, list[Edit]] = {}
    for edit in pool:
        by_kind.setdefault(edit.kind, []).append(edit)
    queues = [rng.sample(edits, len(edits)) for _, edits in sorted(by_kind.items())]
    rng.shuffle(queues)
    picked: list[Edit] = []
    while len(picked) < k and any(queues):
        for queue in queues:
            if queue and len(picked) < k:
                picked.append(queue.pop())
    return picked


def edits(seed: str, document: str = "", n: int = 30, rng_seed: int = 0) -> list[Edit]:
    """Up to ``n`` distinct minor edits of ``seed``, about half consistent, half inconsistent.

    Each edit is a rule applied to the seed (see the module's tables): inconsistent kinds
    ``INCONSISTENT_KINDS`` and consistent ``"paraphrase"``. Single rules come first; when they run
    short, a paraphrase is combined with another paraphrase (still consistent) or with an
    inconsistent rule (inconsistent). Every edit differs from the seed and from the others and is at
    most ``MAX_EDIT_DISTANCE`` words away from it. The same ``rng_seed`` gives the same list.
    Fewer than ``n`` come back when the seed offers fewer opportunities.
    """
    if not seed or not seed.strip() or n < 1:
        return []
    rng = random.Random(rng_seed)
    ops = _all_ops(seed, document or "")
    seen: set[str] = {seed}
    seed_words = word_tokens(seed)
    pools: dict[str, list[list[Edit]]] = {CONSISTENT: [[], []], INCONSISTENT: [[], []]}

    def add(combo: tuple[_Op, ...], tier: int) -> None:
        text = _apply(seed, combo)
        if text in seen or not 0 < _levenshtein(seed_words, word_tokens(text), MAX_EDIT_DISTANCE) <= MAX_EDIT_DISTANCE:
            return  # a punctuation-only change is no edit for the annotator
        seen.add(text)
        main = next((op for op in combo if op.expected == INCONSISTENT), combo[0])
        pools[main.expected][tier].append(Edit(text, main.kind, main.expected, "; ".join(op.note for op in combo)))

    for op in ops:
        add((op,), 0)
    want_consistent = n // 2
    paraphrases = [op for op in ops if op.expected == CONSISTENT]
    short = len(pools[CONSISTENT][0]) < want_consistent or len(pools[CONSISTENT][0] + pools[INCONSISTENT][0]) < n
    for i, first in enumerate(paraphrases if short else []):
        for second in [*paraphrases[i + 1 :], *(op for op in ops if op.expected == INCONSISTENT)]:
            if first.end <= second.start or second.end <= first.start:
                add((first, second), 1)

    consistent_pool = [
        *_round_robin(pools[CONSISTENT][0], n, rng),
        *rng.sample(pools[CONSISTENT][1], len(pools[CONSISTENT][1])),
    ]
    inconsistent_pool = [*_round_robin(pools[INCONSISTENT][0], n, rng), *_round_robin(pools[INCONSISTENT][1], n, rng)]
    take_consistent = min(len(consistent_pool), max(want_consistent, n - len(inconsistent_pool)))
    chosen = consistent_pool[:take_consistent] + inconsistent_pool[: n - take_consistent]
    rng.shuffle(chosen)
    return chosen
