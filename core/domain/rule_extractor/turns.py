"""The owner's turns no specific rule recognised: what they said, kept in their own words.

Casual speech states most lasting facts in forms no clause rule knows -- an answer to a question
("Where's the new job?" / "Vento Pay. It's a payments startup, like 60 people"), a fact about
someone close ("He starts on the 14th of April"), a list, a number ("1350. Under budget!!"). When an
owner's turn yields no memory from the specific rules, its *substantive* sentences become one memory
per run of consecutive sentences that holds one and neither starts nor ends with a reaction or a
question: "User said: ...", in the third person, quoting that run exactly.
An answer keeps the question it answers in its content ("User said, asked 'Where's the new job?':
...") so a fact spread over two turns is one memory; it quotes the owner's turn only (a fact about
the user is only ever quoted from the user's own turns).

A sentence is substantive when it is not a question, not small talk, not an action item or goal,
not a reaction or a mental verb ("I guess ...", "I think ..."),
carries no secret, has at least three content words and holds something specific: a number, a
name, a first-person word. A run never crosses a sentence that carries a secret.

A *named* other speaker's turn that the speaker rules left without a memory gets the same fallback,
labelled with their name ("Jonas said: ..."): a friend telling the owner about themselves
("They're all mutts. Two of them are Jack Russell mixes") is what the owner's assistant should
remember about them. There a sentence that speaks to the owner ("you", "your") breaks the run as a
secret does: it is about the owner or the conversation, and only the owner's own turns speak for them.
"""

from __future__ import annotations

import re

from ..extraction import Segment
from ..routing import change_terms, states_a_value
from ..sensitivity import contains_secret
from .clauses import _I, _Clause, _clauses, _Draft, _trimmed
from .disclosure import _ADDRESSES_OWNER, _FUNCTION_WORDS, _NOT_A_DISCLOSURE
from .patterns import _ACTION, _AIM
from .phrasing import _finish, _third_person_rest

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
MAX_QUESTION_CHARS = 160


def _sentences(segment: Segment) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for clause in _clauses(segment):
        span = _trimmed(segment.text, *clause.sentence)
        if span not in spans:
            spans.append(span)
    return spans


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


def _question(previous: Segment | None, segment: Segment) -> tuple[_Clause, int, int] | None:
    """The last sentence of the previous turn when someone else asked it as a question (what
    ``segment`` answers)."""
    if previous is None or previous.is_user == segment.is_user and (segment.is_user or
                                                                    previous.speaker == segment.speaker):
        return None
    spans = _sentences(previous)
    if not spans:
        return None
    start, end = spans[-1]
    if not _is_question(previous.text, end):
        return None
    text = previous.text[start:end]
    if len(text) > MAX_QUESTION_CHARS or contains_secret(text) or len(text.split()) < 2:
        return None
    return _Clause(previous, start, end, (start, end)), start, end


def turn_memories(segment: Segment, previous: Segment | None, speaker: str | None = None) -> list[_Draft]:
    """Memories for a turn that the specific rules left without any (see the module docstring): the
    owner's (``speaker`` None), or a named other speaker's (``speaker`` their name, ``third_party``)."""
    spans = _sentences(segment)
    text = segment.text
    runs: list[list[tuple[int, int, int]]] = [[]]
    for start, end in spans:
        sentence = text[start:end]
        if contains_secret(sentence) or (speaker is not None and _ADDRESSES_OWNER.search(sentence)):
            runs.append([])
            continue
        runs[-1].append((start, end, _weight(sentence, _is_question(text, end))))
    question = _question(previous, segment)
    who = speaker or "User"
    drafts: list[_Draft] = []
    for run in runs:
        while run and run[0][2] == 0:
            run.pop(0)
        while run and run[-1][2] == 0:
            run.pop()
        if not any(weight == 2 for _, _, weight in run):
            continue
        start, end = run[0][0], run[-1][1]
        said = _finish(_third_person_rest(text[start:end]))
        clause = _Clause(segment, start, end, (start, end))
        quotes: tuple[tuple[_Clause, int, int], ...] = ((clause, start, end),)
        if question is not None and not drafts:
            asked = " ".join(question[0].text.split())
            content = f"{who} said, asked \u201c{asked}?\u201d: {said}"
        else:
            content = f"{who} said: {said}"
        drafts.append(_Draft(content, "fact", "user", None, quotes) if speaker is None
                      else _Draft(content, "fact", "third_party", speaker, quotes))
    return drafts
