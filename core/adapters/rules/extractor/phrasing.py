"""Person and tense: a first-person clause rewritten about "User" or about a named person, as one
short sentence without a final period."""

from __future__ import annotations

import re

from .clauses import _I


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PAST_IRREGULAR = _wordset(
    "went was were had did got made took came ran grew began wrote built found left bought sold met said "
    "quit thought knew saw felt kept lost won spent taught brought fell gave broke drove flew rode swam "
    "sang ate drank slept sent lent became moved stopped won led paid heard caught chose held stood forgot "
    "woke wore threw fought dealt meant sat hit put set cut hurt spent tried"
)
_MODALS = _wordset("can can't cannot could couldn't should shouldn't might must would wouldn't will won't")
_ADVERBS = ("still", "usually", "always", "often", "never", "really", "also", "just", "only", "sometimes",
            "generally", "mostly", "normally", "rarely", "actually", "absolutely", "definitely", "recently",
            "finally", "already", "even")


def _conjugate(verb: str) -> str:
    low = verb.lower()
    if low in _PAST_IRREGULAR or low in _MODALS or low.endswith("ed") or low.endswith("n't"):
        return {"haven't": "hasn't", "don't": "doesn't"}.get(low, verb)
    special = {"have": "has", "do": "does", "go": "goes", "am": "is", "be": "is"}
    if low in special:
        return special[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


_PRONOUNS = (
    (re.compile(r"\bI['’]m\b"), "they're"), (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI['’]ve\b"), "they've"), (re.compile(r"\bI['’]ll\b"), "they'll"),
    (re.compile(r"\bI['’]d\b"), "they'd"), (re.compile(r"\bI was\b"), "they were"), (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmy\b", _I), "their"), (re.compile(r"\bmyself\b", _I), "themselves"),
    (re.compile(r"\bmine\b", _I), "theirs"), (re.compile(r"\bme\b", _I), "them"),
)
_TRAILING_TIME = re.compile(
    r"(?:,?\s+(?:now|today|yesterday|tonight|this morning|this afternoon|right now|at the moment|"
    r"these days|anymore|any more))+$", _I)


# Casual writing spells the pronoun "i" ("i sold the bike", "i'm freelance"); alone it is never
# anything else, so it is read as "I" before any rewrite.
_LOWER_I = re.compile(r"(?<![\w'’-])i(?=(?:['’](?:m|ve|d|ll)\b)|[\s,.!?;:]|$)")


def _upper_i(text: str) -> str:
    return _LOWER_I.sub("I", text)


def _third_person_rest(text: str) -> str:
    text = _upper_i(text)
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


def _finish(content: str) -> str:
    content = _TRAILING_TIME.sub("", content.strip().rstrip(".!?,;: "))
    content = re.sub(r"\s+", " ", content).strip()
    if content.count('"') % 2:
        content += '"'  # a title whose closing quote ended the sentence
    return content[:1].upper() + content[1:] if content else content


def _about_user(body: str) -> str:
    """Rewrite a first-person clause ("I stopped eating meat") as "User stopped eating meat"."""
    body = _upper_i(body)
    head = re.match(r"I(?:['’]m|\s+am)\b", body)
    if head:
        return _finish("User is" + _third_person_rest(body[head.end():]))
    for pattern, replacement in ((r"I(?:['’]ve|\s+have)\b", "User has"), (r"I(?:['’]d|\s+would)\b", "User would"),
                                 (r"I(?:['’]ll|\s+will)\b", "User will"), (r"I\s+(?:don't|do not)\b", "User doesn't"),
                                 (r"I\s+haven't\b", "User hasn't")):
        head = re.match(pattern, body)
        if head:
            return _finish(replacement + _third_person_rest(body[head.end():]))
    words = re.match(r"I((?:\s+(?:" + "|".join(_ADVERBS) + r"))*)\s+([\w']+)", body)
    if words:
        rest = _third_person_rest(body[words.end():])
        return _finish(f"User{words.group(1)} {_conjugate(words.group(2))}{rest}")
    together = re.match(r"my\s+([a-z][\w'’-]*)\s+and\s+I\s+", body, _I)
    if together:  # "my girlfriend and I love ..." -> "User and their girlfriend love ..."
        return _finish(f"User and their {together.group(1).lower()} " + _third_person_rest(body[together.end():]))
    possessive = re.match(r"my\b", body, _I)
    if possessive:
        return _finish("User's" + _third_person_rest(body[possessive.end():]))
    return _finish(_third_person_rest(body))


def _about_person(name: str, rest: str) -> str:
    """``rest`` follows the person's name or pronoun ("'s allergic to peanuts" -> "Tom is allergic ...")."""
    rest = re.sub(r"^'s\s+(?=(?:been|got|gotten|had|done|never|always|\w+ed)\b)", " has ", rest)
    rest = re.sub(r"^'s\b", " is", rest)
    rest = _upper_i(rest)
    rest = re.sub(r"\bmy\b", "the user's", rest, flags=_I)
    rest = re.sub(r"\bme\b", "the user", rest, flags=_I)
    rest = re.sub(r"\bI['’]m\b", "the user is", rest)
    rest = re.sub(r"\bI['’]ve\b", "the user has", rest)
    rest = re.sub(r"\bI\s+([\w']+)", lambda m: "the user " + _conjugate(m.group(1)), rest)
    return _finish(name + rest)
