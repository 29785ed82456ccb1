"""The turns no specific rule recognised: what the speaker said of themselves, in the third person.

Casual speech states lasting facts in forms no clause rule knows. When an owner's turn yields no
memory from the specific rules (or tells a change of their own that none of its memories tells),
each clause of its *substantive* sentences that has the speaker as its subject ("I ...", "my ...",
"im ...") becomes one memory written about them ("I'm in Vancouver now" -> "User is in Vancouver"),
quoting that clause. A clause with no such subject is left out: a dialogue dump ("User said: ...",
"asked '...': ...") never reads alone and is never made (issue 43); the model path is where recall
of such turns comes from.

A sentence is substantive when it is not a question, not small talk, not an action item or goal,
not a reaction or a mental verb ("I guess ...", "I think ..."), carries no secret, has at least
three content words and holds something specific: a number, a name, a first-person word -- or when
it tells a part of the owner's life or a change of it, however short ("i'm pescatarian").

A *named* other speaker's turn that the speaker rules left without a memory gets the same fallback,
labelled with their name ("Jonas has ..."); there a sentence that speaks to the owner ("you",
"your") is left out: it is about the owner or the conversation. What every memory must pass besides
(no dangling pointer, no mood, the kind of a one-day event) is :mod:`.worth`'s.
"""

from __future__ import annotations

import re

from core.adapters.rules.sensitivity import contains_secret
from core.domain.extraction import Segment

from .changes import change_terms, states_a_value
from .clauses import _FILLER, _I, _Clause, _clauses, _Draft, _trimmed
from .disclosure import _ADDRESSES_OWNER, _FUNCTION_WORDS, _NOT_A_DISCLOSURE
from .patterns import _ACTION, _AIM
from .phrasing import _about_user

_SMALL_TALK = re.compile(
    r"\b(?:weather|raining|sunny|cloudy|snowing|what's up|how are you|how's it going|good morning|good night|"
    r"see you|bye|no worries|never mind|sounds good|thank you|thanks|congrat\w*|happy birthday|miss you|"
    r"love you|take care)\b", _I)
_GREETING = re.compile(r"^(?:hi|hey|hello|hiya|morning|evening|afternoon|good (?:morning|evening|afternoon)|"
                       r"quick update|update)\b", _I)
_REACTION = _FUNCTION_WORDS | frozenset(
    ["haha", "hahaha", "lol", "lmao", "omg", "wow", "oh", "ah", "aw", "aww", "yay", "ugh", "hmm", "ok", "okay", "yeah", "yep", "nope", "nah", "yes", "no", "sure", "totally", "exactly", "right", "true", "fair", "good", "great", "nice", "cool", "amazing", "awesome", "brilliant", "lovely", "perfect", "wait", "honestly", "literally", "seriously", "basically", "like", "well", "anyway", "gonna", "wanna", "know", "think", "mean", "guess", "love", "hate", "can't", "won't", "don't", "didn't", "isn't", "it's", "that's", "what's", "i'd", "you'd", "you're", "you've", "your", "you"])
_FIRST_PERSON = re.compile(r"\b(?:I|I['’]?(?:m|ve|d|ll)|my|mine|me|we|we['’](?:re|ve|ll|d)|our|us|myself)\b", _I)
_SPECIFIC = re.compile(r"\d|£|\$|€|(?<!at\s)\b(?:two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)\b", _I)
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][\w'’-]+")
_OWN_THING = re.compile(r"\b(?:my|our|the)\s+(?!(?:one|thing|way|time|day|same|other|rest|point|best|worst|"
                        r"first|last|next|whole)\b)[a-z][\w'’-]+\s+(?:is|are|was|were|needs?|has|won't|keeps?)\b",
                        _I)
# A routine told in passing ("yeah every sunday, she gets worried otherwise", "five a side with the
# lads, been doing it for years"): how often or how long is itself specific.
_ROUTINE = re.compile(r"\b(?:every\s+(?:day|night|morning|evening|week|weekend|weekday|single|mon|tue|wed|thu|fri|sat|sun)\w*|"
                      r"each\s+(?:day|night|morning|week)|most\s+(?:days|nights|mornings|evenings|weekends)|"
                      r"(?:once|twice|three\s+times)\s+a\s+(?:day|week|month)|(?:for|in)\s+years|daily|nightly|"
                      r"weekly|always|usually|the\s+usual)\b", _I)
_SOMEONE = re.compile(r"\b(?:he|she|they|him|her|his)\b", _I)


def _routine(sentence: str) -> bool:
    """A routine named before anyone else is ("every sunday, she gets worried" is the owner's call;
    "He sleeps on the sofa every night" is someone else's habit)."""
    match = _ROUTINE.search(sentence)
    return match is not None and not _SOMEONE.search(sentence[:match.start()])


_THANKS = re.compile(r"^\s*(?:thanks|thank\s+you|thx|ta)\b[\s,!.]*", _I)


def _tells_own_state(sentence: str) -> bool:
    """The owner tells a change of their own ("no cigarettes! haven't touched one since march") or
    a part of their life, however short ("i'm pescatarian", "im in dublin, rathmines", "engaged to
    tom!"): substantive whatever else the sentence holds."""
    return change_terms(sentence) is not None or states_a_value(sentence)


def _weight(sentence: str, question: bool) -> int:
    """2: substantive; 1: neutral (kept inside a run, never at its ends); 0: a reaction, small talk,
    a question, a task or a goal (never starts or ends a run)."""
    if question:
        return 0
    if _tells_own_state(sentence):
        return 2
    sentence = _THANKS.sub("", sentence)  # "thanks, every night at 10, it's how i fall asleep"
    if _SMALL_TALK.search(sentence) or _GREETING.match(sentence):
        return 0
    body = re.sub(r"^(?:(?:oh|and|but|so|also|ok|okay|well|yes|yeah|yep|no|lol|haha)\b[\s,!.]*)+", "", sentence,
                  flags=_I)
    if _ACTION.match(body) or _AIM.match(body) or _NOT_A_DISCLOSURE.match(body):
        return 0  # a task, a goal, or a reaction / mental verb ("I guess ...", "I know ...")
    words = re.findall(r"[\w'’-]+", sentence)
    content = [w for w in words if w.lower() not in _REACTION]
    if not content:
        return 0
    if len(words) < 3 or len(content) < 2:
        return 1
    specific = bool(_SPECIFIC.search(sentence) or _CAPITALISED.search(sentence.strip()) or _routine(sentence))
    if specific or (bool(_FIRST_PERSON.search(sentence)) and len(content) >= 3):
        return 2
    # "ok the prius is filthy", "my dog biscuit": a thing of the owner's named in passing
    return 2 if _OWN_THING.search(sentence) and len(content) >= 2 else 1


def _is_question(text: str, end: int) -> bool:
    return text[end:].lstrip(" \"'”’)").startswith("?")


_FIRST_PERSON_START = re.compile(r"^(?:I(?=\s|['’])|i['’]?(?:m|ve|ll|d)\s|my\s+(?=[a-z]))", _I)
_RUN_TOGETHER = re.compile(r"^i(?P<rest>m|ve|ll|d)\b", _I)  # "im in leeds": the apostrophe left out


def _first_person(clause: _Clause) -> tuple[int, int, str] | None:
    """The clause without its leading fillers, when it then has the speaker as its subject ("I ...",
    "my ...", "im ..."): (start, end, words with "I" spelled out); else None."""
    text = clause.segment.text
    start, end = clause.start, clause.end
    while start < end:
        filler = _FILLER.match(text[start:end])
        if not filler or not filler.end():
            break
        start += filler.end()
    start, end = _trimmed(text, start, end)
    words = text[start:end]
    if not _FIRST_PERSON_START.match(words):
        return None
    return start, end, _RUN_TOGETHER.sub(lambda m: "I'" + m.group("rest"), words)


# A state told without its subject ("engaged to sol!", "retired since may"): the speaker's own.
_SUBJECTLESS_STATE = re.compile(
    r"^(?:engaged|married|single|divorced|separated|widowed|pregnant|retired|vegan|vegetarian|pescatarian|sober|"
    r"unemployed|self-employed|freelance|freelancing|living|working|based|studying)\b", _I)


def _state_said_short(clause: _Clause) -> tuple[int, int, str] | None:
    """A clause that tells the speaker's own state with no subject, as if said "I'm ..."."""
    start, end = _trimmed(clause.segment.text, clause.start, clause.end)
    words = clause.segment.text[start:end]
    if not _SUBJECTLESS_STATE.match(words) or not _tells_own_state(words):
        return None
    return start, end, "I'm " + words


def turn_memories(segment: Segment, previous: Segment | None, speaker: str | None = None) -> list[_Draft]:
    """Memories for a turn that the specific rules left without any (see the module docstring): the
    owner's (``speaker`` None), or a named other speaker's (``speaker`` their name, ``third_party``).
    ``previous`` is the turn before (kept for the callers; an answer is no longer framed by its
    question)."""
    text = segment.text
    who = speaker or "User"
    drafts: list[_Draft] = []
    for clause in _clauses(segment):
        sentence = text[clause.sentence[0]:clause.sentence[1]]
        if contains_secret(sentence) or (speaker is not None and _ADDRESSES_OWNER.search(sentence)):
            continue
        start, end = _trimmed(text, *clause.sentence)
        if _weight(text[start:end], _is_question(text, end)) != 2 and not _tells_own_state(clause.text):
            continue
        said = _first_person(clause) or _state_said_short(clause)
        if said is None:
            continue
        content = _about_user(said[2])
        if not content.startswith("User"):
            continue
        content = who + content[len("User"):]
        quotes: tuple[tuple[_Clause, int, int], ...] = ((clause, said[0], said[1]),)
        drafts.append(_Draft(content, "fact", "user", None, quotes) if speaker is None
                      else _Draft(content, "fact", "third_party", speaker, quotes))
    return drafts
