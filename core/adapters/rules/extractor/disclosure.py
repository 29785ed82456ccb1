"""What a clause discloses: a durable first-person statement about the owner (specific rules, then
a generic fallback), a joint experience, a habit, a named speaker, and a short answer that echoes a
question about the owner."""

from __future__ import annotations

import re

from core.adapters.rules.sensitivity import contains_secret
from core.domain.extraction import MemoryKind, Segment

from .clauses import _I, _Clause, _clauses, _Draft, _trimmed
from .patterns import (
    _ACTION,
    _AIM,
    _AM,
    _CHATTER,
    _DURABLE_VERB,
    _DURATION,
    _EVENT,
    _FUTURE,
    _HABIT,
    _HABIT_BY_ADVERB,
    _HABIT_MARK,
    _ME,
    _MEAT,
    _MY_ATTRIBUTE,
    _MY_VERB,
    _NOT_A_NAME,
    _NOT_HABIT_VERB,
    _NUMBERISH,
    _OWNER_START,
    _PLAN,
    _PREFERENCE,
    _STATE_OK,
    _STATE_PREFERENCE,
    _WE_EVENT,
    _WITH_ME,
    _YES,
    _YOU_QUESTION,
)
from .phrasing import _about_user, _conjugate, _finish, _third_person_rest, _wordset


def _is_habit(body: str) -> bool:
    """A repeated activity of the owner: "I take classes twice a week", "I usually cook on Sundays"."""
    by_adverb = _HABIT_BY_ADVERB.match(body)
    if by_adverb and by_adverb.group("verb").lower() not in _NOT_HABIT_VERB:
        return True
    habit = _HABIT.match(body)
    return bool(habit and habit.group("verb").lower() not in _NOT_HABIT_VERB and _HABIT_MARK.search(body))


def _joint(body: str) -> str:
    """ "We went camping" / "my sister and I went camping" -> "User and ... went camping"."""
    together = _WITH_ME.match(body)
    if together:
        who = together.group("who")
        partner = "their " + who.split(None, 1)[1].lower() if who.lower().startswith("my ") else who
        rest = together.group("rest")
    else:
        partner, rest = "others", body.split(None, 1)[1]
    rest = re.sub(r"\bour\b", "their", rest, flags=_I)
    rest = re.sub(r"\bus\b", "them", rest, flags=_I)
    return _finish(f"User and {partner} " + _third_person_rest(rest))


def _self_disclosure(body: str) -> tuple[MemoryKind, str, str | None] | None:
    """A durable first-person statement as (kind, content written about "User", category), or None.

    ``body`` starts at the speaker's words (fillers, reported speech and a leading time phrase are
    already stripped). Action items and goals are not self-disclosure.
    """
    if _ACTION.match(body) or _AIM.match(body):
        return None
    found = _disclosed(body)
    if found is None:
        return None
    kind, content, category = found
    if kind is None or len(content.split()) < 3:
        return None
    return kind, content, category


def _disclosed(body: str) -> tuple[MemoryKind | None, str, str | None] | None:
    """What the first rule that knows ``body`` makes of it; None when a rule refuses it outright."""
    if _MEAT.search(body) and body.lower().startswith("i "):
        return "preference", "User is vegetarian and " + _about_user(body)[len("User "):], None
    if _PREFERENCE.match(body):
        pref = _PREFERENCE.match(body)
        obj = ((pref.group("obj") or pref.group("obj2") or "") if pref else "").strip().lower()
        if obj in {"it", "that", "this", "them", "you", "so", "too"}:
            return None
        return "preference", _about_user(body), None
    if _PLAN.match(body):
        return "plan", _about_user(body), None
    if _is_habit(body):
        return "fact", _about_user(body), "habits"
    if _MY_ATTRIBUTE.match(body) or _DURABLE_VERB.match(body) or _MY_VERB.match(body) or _EVENT.match(body):
        if re.match(r"^" + _ME + r"(?:['’]ve|have)\s+been\s+(?:doing|at)\s+(?:it|this|that)\b", body, _I) \
                and not _DURATION.search(body):
            return None  # "I've been doing it" says nothing on its own
        return "fact", _about_user(body), None
    if _WE_EVENT.match(body) or _WITH_ME.match(body):
        return "fact", _joint(body), None
    return _state(body)


def _state(body: str) -> tuple[MemoryKind | None, str, str | None]:
    """"I'm training for a marathon", "I'm moving to Leeds next spring": a state, a plan or a liking."""
    am = _AM.match(body)
    if not (am and _STATE_OK.match(am.group("rest"))):
        return None, "", None
    rest = am.group("rest")
    future = re.match(r"(?:going|planning|moving|starting|buying|selling|switching|leaving|"
                      r"joining|getting)\b", rest, _I) and _FUTURE.search(rest)
    kind: MemoryKind = "plan" if future or rest.lower().startswith("training") else "fact"
    if _STATE_PREFERENCE.match(rest):
        kind = "preference"
    return kind, _about_user(body), None


# The fallback for first-person statements no specific rule knows: "I'm doing the sound for a new
# musical at the Citizens Theatre", "my left arm's in a splint". Reactions, opinions about the
# conversation and mental verbs ("I know", "I think so", "I can't wait") are not facts about anyone.
_GENERIC_START = re.compile(r"^(?:I(?:['’](?:m|ve|d|ll))?\s+|my\s+(?=[a-z]))", _I)
_NOT_A_DISCLOSURE = re.compile(
    r"^I(?:['’]m|\s+am|['’]ve|\s+have|['’]ll|\s+will|['’]d|\s+would|\s+do|\s+did|\s+can|\s+could)?\s+"
    r"(?:(?:just|really|also|so|still|totally|honestly|actually|even|kind of|sort of|not|never|don't|didn't|can't|"
    r"won't|couldn't)\s+)*"
    r"(?:know|knew|think|thought|guess|mean|meant|bet|suppose|agree|promise|hope|wish|wonder|believe|feel|felt|"
    r"forgot|forget|remember|understand|see|saw|hear|heard|tell|told|say|said|wait|believe|complain|care|mind|"
    r"imagine|reckon|owe|sorry|glad|happy|jealous|kidding|joking|sure|afraid|totally|fine|good|great|okay|ok|"
    r"alright|well|done|ready|here|there|in|on board|down|up for|curious|impressed|proud of you|excited for|"
    r"love that|love it|love this|like that|like it|like this|hate that|miss you|get it|get that|need|needed|"
    r"want|wanted|try|tried|let|have to|had to|got to|gotta|be|have no idea|have a question)\b", _I)
_FUNCTION_WORDS = _wordset(
    "i i'm i've i'll i'd me my mine we our us you your a an the and or but so to of in on at for with from by "
    "is am are was were be been being have has had do does did it its it's this that these those there then "
    "than just really very too also still now not no yes some any all much many more most about as up out "
    "off over into onto get got getting go going went gone make made one thing things lot bit way")


def _generic_disclosure(clause: _Clause, body: str) -> str | None:
    """``body`` rewritten about "User" when it is a first-person statement with enough substance."""
    sentence_end = clause.segment.text[clause.sentence[0]:clause.sentence[1]].rstrip()
    if sentence_end.endswith("?") or not _GENERIC_START.match(body) or _NOT_A_DISCLOSURE.match(body):
        return None
    if _ADDRESSES_OWNER.search(body) or _CHATTER.search(body) or _ACTION.match(body) or _AIM.match(body):
        return None
    words = re.findall(r"[\w'’-]+", body)
    content_words = [w for w in words if w.lower() not in _FUNCTION_WORDS]
    if len(words) < 4 or len(content_words) < 3:
        return None
    content = _about_user(body)
    return content if content.startswith("User") and len(content.split()) >= 4 else None


# A named speaker: "Jonas", "Mary Ann"; never a diarization label ("SPEAKER_01", "Speaker 2", "B").
_SPEAKER_NAME = re.compile(r"[A-Z][a-z]+(?:[ -][A-Z][a-z]+)?")
_NOT_A_SPEAKER = _wordset("speaker user unknown guest other someone assistant owner narrator")
_ADDRESSES_OWNER = re.compile(r"\b(?:you|your|yours|yourself|you['’]\w+|y'all)\b", _I)
_EMPHATIC_MYSELF = re.compile(r"\s+themselves(?=$|,)")


def _speaker_name(label: str) -> str | None:
    """The speaker's name when the transcript names them, else None (the speaker is anonymous)."""
    label = (label or "").strip()
    if not _SPEAKER_NAME.fullmatch(label):
        return None
    first = label.split()[0].split("-")[0].lower()
    return None if first in _NOT_A_NAME or first in _NOT_A_SPEAKER else label


def _wh_echo(aux: str, pred: str, answer: str, still: str) -> str | None:
    """"How far do you run?" / "About twelve kilometres ..." -> "User runs about twelve kilometres ..."
    (a "do" question answered with a number, not with a sentence about the owner)."""
    if aux != "do" or _OWNER_START.match(answer) or not _NUMBERISH.search(answer):
        return None
    verb, _, tail = pred.partition(" ")
    rest = (" " + tail if tail else "") + " " + answer[:1].lower() + answer[1:]
    return f"User {still}{_conjugate(verb)}{rest}"


def _yes_echo(aux: str, pred: str, answer: str, still: str) -> str | None:
    """"Are you still vegetarian?" / "Yes, for almost eight years now." -> "User is still
    vegetarian, for almost eight years now" (a "yes" and a few words, not a full sentence)."""
    yes = _YES.match(answer)
    if not yes:
        return None
    tail = answer[yes.end():].strip()
    if len(tail.split()) < 2 or _OWNER_START.match(tail):
        return None  # a full sentence after "yes" is extracted on its own
    head = {"are": "User is " + still + pred, "have": "User has " + still + pred}.get(aux)
    if head is None:
        verb, _, more = pred.partition(" ")
        head = f"User {still}{_conjugate(verb)}" + (" " + more if more else "")
    return f"{head}, {tail}"


def _echo(segment: Segment, previous: Segment | None) -> _Draft | None:
    """A short answer to a question about the owner, rewritten with the question's predicate.

    "Are you still vegetarian?" / "Yes, for almost eight years now." -> "User is still vegetarian, for
    almost eight years"; "How far do you run?" / "About twelve kilometres on Sundays." -> "User runs
    about twelve kilometres on Sundays". The quote is the owner's answer sentence only.
    """
    if previous is None or previous.is_user:
        return None
    question = _YOU_QUESTION.search(previous.text.strip())
    if not question:
        return None
    first = next(_clauses(segment), None)
    if first is None:
        return None
    start, end = _trimmed(segment.text, *first.sentence)
    answer = segment.text[start:end]
    if contains_secret(answer) or _CHATTER.search(answer) or _CHATTER.search(question.group(0)):
        return None
    pred = question.group("pred").strip()
    if re.search(r"\b(?:you|your|me|my|it|that|this|think|mean|want|need|remember|know|like it|mind)\b", pred, _I):
        return None
    aux = question.group("aux").lower()
    still = "still " if question.group("still") else ""
    echoed = (_wh_echo(aux, pred, answer, still) if question.group("wh")
              else _yes_echo(aux, pred, answer, still))
    if echoed is None:
        return None
    content = _finish(_third_person_rest(echoed))
    if len(content.split()) < 4:
        return None
    clause = _Clause(segment, start, end, (start, end))
    return _Draft(content, "fact", "user", None, ((clause, start, end),))
