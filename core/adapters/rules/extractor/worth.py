"""Whether a drafted memory is worth keeping, and as what kind (issue 43).

A memory is kept only when it reads alone and says something durable about a person. The checks
run on every draft before it is bound (:meth:`RuleExtractor._finalise`); where they cannot tell,
the memory is left out: the model path is where recall comes from.

- **Reads alone**: the speaker's own words (the draft's quote spans) hold no pronoun or pointer
  whose referent is elsewhere in the conversation -- "it", "them", "they", "these", "those",
  "here", "there" (but "there is ..."), "this" and a pointing "that" ("loved that") -- and the
  memory's text does not speak to someone ("you") nor, when it is about the user, name a "he" or
  "she" it never introduced. It has at least four words besides its date.
- **Not passing**: a mood or feeling ("is excited", "feels hopeful", "has been busy"), a wish or
  an offer ("will keep looking", "would love to") is not a fact about anyone.
- **Kind**: an event of one day ("went bowling yesterday", "tried a new cafe last weekend") is a
  ``plan`` (it archives at its deadline) unless it changes the person's life ("started a new job
  last week", "dad passed away two days ago"); a statement about the future is a ``plan``.
"""

from __future__ import annotations

import re

from .clauses import _I

# Pointers whose referent the memory does not carry. "that" points when it stands for a thing
# (after a verb or a preposition, or alone); after a noun or a verb of saying it joins a clause.
_POINTER = re.compile(
    r"\b(?:it|it['’]s|its|them|they|they['’](?:re|ve|ll|d)|their|theirs|themselves|here)\b"
    r"|\b(?:this|these|those)\b(?!(?:\s+[\w'’-]+){1,3}\s+(?:called|named)\b)"
    r"(?!\s+(?:morning|afternoon|evening|week|weekend|month|year|winter|summer|spring|autumn|fall|season|"
    r"semester|term|time|days)\b)"
    r"|\b(?:something|someone|somebody|somewhere|stuff)\b(?!\s+(?:called|named)\b)"
    r"|\bthere\b(?!\s*(?:is|are|was|were|['’]s|has|have|had)\b)"
    r"|(?:^|\b(?:about|of|in|at|to|for|with|on|from|like|by|out|into|do|did|does|doing|done|try|tried|see|saw|"
    r"love|loved|like|liked|enjoy|enjoyed|got|get|have|had|made|make|finish|finished|start|started|up|is|was|"
    r"all|just|miss|missed|remember)\s+)that\b(?!\s+(?:i|you|we|he|she|they|my|the|a|an|it)\b)"
    r"|\bthat\b(?=\s*(?:$|[,.!?;:]|(?:in|on|at|for|with|to|from|up|out|off|again|too|as|so|and|but|or|is|was|"
    r"['’]s)\b))", _I)
_ADDRESS = re.compile(r"\b(?:you|your|yours|yourself|you['’]\w+|y'all)\b", _I)
_THIRD_PERSON = re.compile(r"\b(?:he|she|him|his|her|hers|he['’]s|she['’]s)\b", _I)
_SUBJECT = r"^(?:\S+?)(?:['’]s\s+\w+|\s+and\s+their\s+\w+)?\s+(?:(?:also|still|just|really|always|usually|now|currently)\s+)*"
_MOOD = re.compile(
    _SUBJECT + r"(?:(?:is|are|was|were|has\s+been|have\s+been|feels|felt|gets|got|seems)\s+"
    r"(?:(?:so|super|really|very|pretty|quite|a\s+bit|a\s+little|totally|absolutely|always|also|still|just|"
    r"feeling|getting|kind\s+of|kinda|incredibly|extremely|truly|definitely|now)\s+)*"
    r"(?:excited|hyped|happy|glad|thrilled|stoked|pumped|nervous|anxious|worried|sad|upset|stressed|tired|"
    r"exhausted|busy|proud|grateful|thankful|lucky|blessed|bummed|psyched|hopeful|optimistic|overwhelmed|"
    r"relieved|bored|sorry|amazed|impressed|inspired|motivated|curious|eager|keen\s+to|looking\s+forward|"
    r"filled\s+with|on\s+an?\s+\w*\s*(?:rollercoaster|roller\s+coaster|high)|down|great|good|fine|okay|ok|"
    r"doing\s+(?:well|great|good|fine|okay|ok)|in\s+awe|blown\s+away|touched|moved\s+by|speechless|"
    r"determined|ready|sure|certain|confident|scared|afraid|heartbroken|devastated|pleased|delighted|"
    r"fascinated|intrigued|hooked|loving|enjoying|having\s+a\s+(?:blast|great|good)|craving|(?:sitting|standing|"
    r"waiting|resting|chilling|relaxing|lying)\b|\w+ing\s+(?=(?:right\s+)?now\b))\b"
    r"|(?:was|were)\s+(?:\w+ing\b(?!.*\b(?:every|each|daily|weekly|usually|always|for\s+\w+\s+years)\b)|"
    r"(?:so|too|very|really)\s+\w+\b)"
    r"|(?:feels|felt|is\s+feeling|was\s+feeling|has\s+been\s+feeling|can['’]t\s+wait|cannot\s+wait|"
    r"thinks|thought|believes|guesses|knows|agrees|means|meant|is\s+sure|had\s+a\s+blast|"
    r"had\s+(?:a\s+)?(?:great|good|lovely|wonderful|amazing|fun)\s+time)\b)", _I)
# A wish, an offer or an intention: what the person may do, not what is so (a ``plan`` at most).
_INTENT = re.compile(
    _SUBJECT + r"(?:will|would|might|could|should|may|can(?!['’]t|not)|['’]ll|['’]d|wants?\s+to|wanted\s+to|hopes?\s+to|"
    r"wishes|(?:is|are)\s+(?:going|gonna|about)\s+to|(?:is|are)\s+trying\s+to|tries\s+to|needs?\s+to|has\s+to|had\s+to|"
    r"is\s+planning|plans\s+to|is\s+thinking|intends\s+to|is\s+considering|is\s+looking\s+(?:into|for))\b", _I)
# A life change told with the day it happened is still a lasting fact about the person.
_LIFE_CHANGE = re.compile(
    r"\b(?:start(?:s|ed|ing)?|began|begun|"
    r"join(?:s|ed|ing)\s+(?:(?:a|an|the|their|my)\s+)?(?:[\w-]+\s+)?(?:team|club|company|firm|band|gym|group|class|"
    r"course|program|programme|school|church|choir|league|community|startup|board|army|navy|union|society)|mov(?:e|es|ed)|relocat\w+|adopt\w*|bought|buy|purchas\w+|"
    r"sold|sell|marri\w+|engaged|divorc\w+|graduat\w+|quit|left|leav\w+|retir\w+|hired|promot\w+|"
    r"passed\s+away|died|born|had\s+(?:a|their)\s+(?:baby|son|daughter)|launch\w+|found(?:ed)|open(?:ed)|"
    r"enrol+\w*|signed\s+up|new\s+(?:job|home|house|flat|apartment|role|position|puppy|dog|cat|car|partner)|"
    r"broke\s+up|split\s+up|diagnos\w+|lost\s+(?:their|a|an|the)\s+(?:job|mom|mum|mother|dad|father|"
    r"brother|sister|wife|husband|friend|grandma|grandmother|grandpa|grandfather|dog|cat)|"
    r"got\s+(?:a|an|the|their)\s+(?:job|dog|cat|puppy|kitten|degree|diploma|license|licence|certificat\w+)|"
    r"became|accepted|admitted|finished\s+(?:school|university|college|their\s+degree)|pregnant|"
    r"expecting|tattoo|finish\w*|complet\w+)\b", _I)
_ONE_DAY = re.compile(
    r"\b(?:yesterday|today|tonight|this\s+(?:morning|afternoon|evening)|last\s+night|the\s+other\s+day|"
    r"earlier|(?:last|this|next)\s+(?:weekend|week|mon|tues|wednes|thurs|fri|satur|sun)\w*|"
    r"(?:a\s+few|a\s+couple\s+of|couple\s+of|\d+|one|two|three|four|five|six)\s+days?\s+ago|"
    r"(?:a|one|two|a\s+couple\s+of)\s+weeks?\s+ago|on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"tomorrow|recently|just\s+now)\b", _I)
_FUTURE = re.compile(
    r"\b(?:will|['’]ll|going\s+to|gonna|plans?\s+to|planning|tomorrow|next\s+\w+|upcoming|soon|hopes?\s+to|"
    r"wants?\s+to|would\s+(?:like|love)\s+to|['’]d\s+(?:like|love)\s+to)\b", _I)
_DATE_NOTE = re.compile(r"\s*\([^()]*:\s[^()]*\)\s*$")


# Where a clause may be cut: a comma, a dash or a conjunction that starts a new statement.
_BOUNDARY = re.compile(r"\s*(?:[,;:]|\s[-–—]+)\s*(?:(?:and|but|so|because|though|although|since|as|which|when|while|where|"
                       r"plus)\s+)?|\s+(?:and|but|so|because|though|although|since|which|when|while|where|plus)\s+", _I)


def cut_before_pointer(spoken: str, content: str) -> tuple[str, str] | None:
    """``spoken`` and ``content`` cut before the part that holds the first pointer, when that part
    follows a comma, a dash or a conjunction and the content shows the same cut; else None."""
    pointer = _POINTER.search(spoken)
    if pointer is None:
        return None
    cuts = [m for m in _BOUNDARY.finditer(spoken, 0, pointer.start()) if m.start() > 0]
    if not cuts:
        return None
    cut = cuts[-1]
    tail = spoken[cut.start():].split()
    if not tail:
        return None
    # The same words in the content (a conjunction and the next word; the pointer words are never rewritten).
    joint = spoken[cut.start():cut.end()].strip()
    following = spoken[cut.end():].split()
    if not following:
        return None
    probe = re.compile((re.escape(joint) + r"\s*" if joint else r"\s+") + re.escape(following[0]) + r"\b", _I)
    at = [m for m in probe.finditer(content)]
    if len(at) != 1:
        return None
    head = spoken[:cut.start()].rstrip(" ,;:-–—")
    return head, content[:at[0].start()].rstrip(" ,;:-–—")


# "has been playing for a month": an activity with no object says nothing without the conversation.
_NO_OBJECT = re.compile(r"^\S+\s+(?:has|have)\s+been\s+(?:playing|doing|practi[sc]ing|learning|going|trying|"
                        r"working\s+on|at)\s+(?:for|since)\b", _I)


def speaks_alone(spoken: str, content: str, about_user: bool) -> bool:
    """Whether a memory reads alone: no pointer in the speaker's words ``spoken``, no "you" and (for
    a memory about the user) no unintroduced "he"/"she" in ``content``, no activity without its object."""
    if _POINTER.search(spoken) or _ADDRESS.search(content) or _NO_OBJECT.match(content):
        return False
    if about_user and _THIRD_PERSON.search(content):
        return False
    return len(_ONE_DAY.sub("", _DATE_NOTE.sub("", content)).split()) >= 3


def mood(content: str) -> bool:
    """A mood or a feeling, a passing opinion: nothing lasting about the person."""
    return _MOOD.match(_DATE_NOTE.sub("", content)) is not None


_HABITUAL = re.compile(r"\b(?:usually|always|often|normally|generally|every|each|once\s+a|twice\s+a|"
                       r"\w+\s+times\s+a|at\s+least\s+once)\b", _I)


def intent(content: str) -> bool:
    """A wish, an offer or an intention ("will keep looking", "wants to try ..."): a plan at most;
    not a habit ("usually tries to get out of town once a weekend")."""
    content = _DATE_NOTE.sub("", content)
    return _INTENT.match(content) is not None and _HABITUAL.search(content) is None


def one_day(spoken: str, content: str) -> bool:
    """An event of one day (or a plan for one) that changes nothing lasting about the person."""
    return (_ONE_DAY.search(spoken) is not None or _FUTURE.search(spoken) is not None) \
        and _LIFE_CHANGE.search(content) is None
