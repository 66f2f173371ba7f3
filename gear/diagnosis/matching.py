"""Answers matched as a person reads them, in one place: whether a text holds an answer (the diagnosis's "a gold answer
is in the gold passages / the passages the QA step read", and the answer suggestions of gear.diagnosis.gold_marks),
and whether a wrong answer is right in substance, failed by exact match on its form alone.

Both start from the measures' SQuAD normalisation (gear.measures: case, punctuation, articles) and go a little
further where EM is stricter than a reader: a possessive is the name ("Laura Hillenbrand's book" holds "Laura
Hillenbrand"), a number is the same in words or digits ("twice", "two", "2"), and a date is the same however it is
written ("4 July 1776", "July 4, 1776", "1776-07-04"). A gold answer's aliases are separate answers, each tried.

Right in substance (`form_only`): the same words after that normalisation; a name with or without a title ("Sir",
"Saint", …); a fuller or shorter form that differs only by a generic word ("Niger" for "Niger River"); a person's name
without a first or middle name ("Kennedy" for "John F. Kennedy"); a place without its region ("Paris" for "Paris,
France"); a fuller date that holds the gold one ("in February 1929" for "1929"); the same items of a list however joined
("A, B, C" for "A, B, and C"); the gold answer said within a sentence, three words longer at least ("… performed as lead
vocalist and …" for "lead vocalist"). Not: a less specific answer ("Somerset" for "Weston-super-Mare, Somerset", a year
for a whole date), or another entity.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from functools import lru_cache

_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”–—")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_POSSESSIVE = re.compile(r"(\w)['’]s\b|(\ws)['’](?=\s|$)")
_MONTHS = {name: n for n, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), 1) for name in names}
_MONTH = r"(?P<{}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_MONTH_YEAR = re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH.format("m") + r",?\s+(?P<y>\d{3,4})\b")
_MONTH_DAY_YEAR = re.compile(r"\b" + _MONTH.format("m") + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{3,4})\b")
_ISO = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")
_MONTH_YEAR = re.compile(r"\b" + _MONTH.format("m") + r",?\s+(?P<y>\d{3,4})\b")
_NUMBERS = {word: str(n) for n, words in enumerate(
    ((), ("one", "once"), ("two", "twice"), ("three", "thrice"), ("four",), ("five",), ("six",), ("seven",),
     ("eight",), ("nine",), ("ten",), ("eleven",), ("twelve",), ("thirteen",), ("fourteen",), ("fifteen",),
     ("sixteen",), ("seventeen",), ("eighteen",), ("nineteen",), ("twenty",))) for word in words}
_ORDINALS = {"first": "1st", "second": "2nd", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th",
             "seventh": "7th", "eighth": "8th", "ninth": "9th", "tenth": "10th"}
_TIMES = re.compile(r"^(\d+) times?$")
#: words a person drops or adds without naming another thing ("Niger" / "Niger River", "Harvard" / "Harvard
#: University"); not "kingdom", "republic", "state": "United" is not "United Kingdom"
GENERIC = frozenset({"river", "lake", "mountain", "mount", "mountains", "city", "town", "village", "county", "province",
                     "island", "islands", "university", "college", "school", "company", "corporation", "inc", "ltd",
                     "co", "band", "group", "film", "district", "region", "fc", "club", "team", "airport", "station",
                     "church", "cathedral", "bridge", "valley", "desert", "sea", "ocean", "bay"})
TITLES = frozenset({"sir", "dame", "saint", "st", "dr", "doctor", "mr", "mrs", "ms", "lord", "lady", "king", "queen",
                    "prince", "princess", "president", "general", "captain", "professor", "prof", "pope", "emperor",
                    "empress", "duke", "duchess", "count", "countess", "baron", "reverend", "rev", "father", "brother",
                    "sister", "jr", "sr"})
YES_NO = frozenset({"yes", "no"})
_DATE_WORDS = frozenset({"in", "on", "around", "about", "circa", "c", "ad", "bc", "early", "late", "mid"})
_MONTH_TOKEN = re.compile(r"^m\d{1,2}$")


def _date(match: re.Match[str]) -> str:
    month = _MONTHS.get(match["m"], 0) if not match["m"].isdigit() else int(match["m"])
    day = f"{int(match['d'])} " if "d" in match.groupdict() else ""
    return f" {day}m{month} {match['y']} "


@lru_cache(maxsize=1 << 14)
def normalise(text: str) -> str:
    """SQuAD normalisation (gear.measures.normalize_answer) after possessives are dropped, dates written one way and
    numbers up to twenty written in digits: the form in which an answer and a text are compared."""
    text = _POSSESSIVE.sub(lambda m: m.group(1) or m.group(2), text.lower())
    text = _ISO.sub(_date, _MONTH_DAY_YEAR.sub(_date, _DAY_MONTH_YEAR.sub(_date, text)))
    text = _MONTH_YEAR.sub(_date, text)
    words = _ARTICLES.sub(" ", text.translate(_PUNCTUATION)).split()
    return " ".join(_ORDINALS.get(w, _NUMBERS.get(w, w)) for w in words)


def _answer(answer: str) -> str:
    said = normalise(answer)
    times = _TIMES.match(said)
    return times.group(1) if times else said  # "2 times" is "twice"


def holds(text: str, answer: str) -> bool:
    """The answer occurs in the text as whole words, both normalised as above."""
    needle = _answer(answer)
    return bool(needle) and f" {needle} " in f" {normalise(text)} "


def holds_any(text: str, answers: Iterable[str]) -> bool:
    """The text holds one of the answers (a gold answer and its aliases)."""
    return any(holds(text, a) for a in answers)


def is_yes_no(answers: Sequence[str]) -> bool:
    """Every answer is yes or no: a comparison's verdict, which no passage states in words."""
    return bool(answers) and all(normalise(a) in YES_NO for a in answers)


def form_only(answer: str, gold: Sequence[str]) -> str:
    """Why the answer is right in substance though exact match fails it ("" when it is not): the first gold answer
    (or alias) it matches in one of the ways the module's words list."""
    said = _answer(answer)
    if not said:
        return ""
    for g in gold:
        reason = _same_in_substance(answer, said, g, _answer(g))
        if reason:
            return reason
    return ""


def _same_in_substance(raw: str, said: str, raw_gold: str, gold: str) -> str:
    if not gold:
        return ""
    if said == gold:
        return f"{raw!r} and the gold {raw_gold!r} are the same once case, punctuation, possessives, numbers and " \
               "dates are set aside"
    a, g = said.split(), gold.split()
    if [w for w in a if w not in TITLES] == [w for w in g if w not in TITLES] and any(w not in TITLES for w in a):
        return f"{raw!r} is the gold {raw_gold!r} with or without a title"
    shorter, longer = (a, g) if len(a) < len(g) else (g, a)
    if _inside(shorter, longer):
        extra = [w for w in longer if w not in shorter]
        if extra and all(w in GENERIC or w in TITLES for w in extra) and any(w not in GENERIC for w in shorter):
            return f"{raw!r} and the gold {raw_gold!r} differ by {' '.join(extra)!r} only: the same name, fuller or " \
                   "shorter"
    if _dated(g) and _inside_run(g, a) and all(w.isdigit() or _MONTH_TOKEN.match(w) or w in _DATE_WORDS
                                               for w in a if w not in g):
        return f"{raw!r} is a fuller date holding the gold {raw_gold!r}"
    items = _items(raw)
    if len(items) > 1 and items == _items(raw_gold):
        return f"{raw!r} lists the gold's items ({raw_gold!r}), joined otherwise"
    if len(a) >= len(g) + 3 and _inside_run(g, a) and not _numbers_besides(a, g) and not _dated(g):
        return f"{raw!r} says the gold {raw_gold!r} within more words"
    first = _first_part(raw_gold)
    if first and first == said and "," in raw_gold:
        return f"{raw!r} is the gold {raw_gold!r} without its region"
    first = _first_part(raw)
    if first and first == gold and "," in raw:
        return f"{raw!r} is the gold {raw_gold!r} with its region"
    if len(a) < len(g) and _is_name(raw_gold) and a[-1] == g[-1] and _inside(a, g):
        return f"{raw!r} is the gold {raw_gold!r}, a person's name without a first or middle name"
    return ""


def _inside(shorter: Sequence[str], longer: Sequence[str]) -> bool:
    """`shorter` is a run of consecutive words of `longer`, or its words in the same order with gaps."""
    it = iter(longer)
    return bool(shorter) and all(w in it for w in shorter)


def _dated(words: Sequence[str]) -> bool:
    """Every word is a part of a date as `normalise` writes one: a number (day, year) or a month."""
    return bool(words) and all(w.isdigit() or _MONTH_TOKEN.match(w) for w in words) and \
        any(len(w) >= 3 and w.isdigit() for w in words)


def _inside_run(shorter: Sequence[str], longer: Sequence[str]) -> bool:
    n = len(shorter)
    return any(list(longer[i:i + n]) == list(shorter) for i in range(len(longer) - n + 1))


def _items(text: str) -> frozenset[str]:
    """The items of a list answer, however joined ("A, B and C", "A, B, C", "A; B & C")."""
    parts = re.split(r",|;|&|\band\b", text.lower())
    return frozenset(x for x in (normalise(part) for part in parts) if x)


def _numbers_besides(words: Sequence[str], gold: Sequence[str]) -> bool:
    """The answer holds a number the gold does not: another count or year said beside it."""
    return any(w.isdigit() and w not in gold for w in words)


def _first_part(text: str) -> str:
    return normalise(text.split(",")[0]) if "," in text else ""


def _is_name(text: str) -> bool:
    """Looks like a person's name: two to four capitalised words, no digits, no comma."""
    words = text.replace(".", ". ").split()
    return 2 <= len(words) <= 4 and "," not in text and not any(ch.isdigit() for ch in text) and \
        all(w[:1].isupper() for w in words)
