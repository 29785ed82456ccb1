"""The deterministic, rule-based extractor (the default; id ``rules``, version ``1``).

It reads the owner's segments (every pseudo-segment of integration text), splits them into clauses
and keeps the clauses that state something durable in the first person -- facts, preferences,
relationships, plans -- or a durable fact about a named other person. A segment of another speaker
is read only when the transcript names that speaker ("Jonas", not a diarization label such as
``SPEAKER_01``): what they say about themselves in the first person is a fact about them
(``third_party``, ``subject_label`` their name), never the user's; their action items and goals are
not the owner's and are skipped, and so is any clause of theirs that mentions "you". Greetings,
weather and small talk match no rule and are skipped. Action items ("I need to ...") and goals
("I'm aiming for ...", "I'm training for ...") become workflow candidates, never memories.

Durable self-disclosure it recognises: states and roles ("I'm a nurse", "I'm leading a project"),
habits ("I take classes twice a week", "I usually cook ...", "Every Monday I drive ..."), experiences
("I went hiking ...", "I got a grant ...", "We went camping ...", "Lena and I visited ..."),
possessions and family ("my contract runs until ...", "my parents live in ..."), preferences,
durations ("I've been vegetarian for eight years") and plans ("I'm planning to ...", "I'd like to
..."). A short answer to a question about the owner ("Are you still vegetarian?" / "Yes, for eight
years") is rewritten with the question's predicate but quotes only the owner's answer. A habit of a
named person or pet ("He sleeps on my keyboard whenever ...") stays theirs.

Content convention: one short sentence written about its subject, without a final period --
"User stopped eating meat about two years ago", "Tom is allergic to peanuts". A fact about another
person keeps that person as the subject (``third_party`` with ``subject_label`` the name); it is
never rewritten as the user's. Each quote is the exact clause (a substring of its segment, not the
whole segment when it carries several facts); a clause that discloses a secret is dropped whole.

Every emitted candidate has been bound against the source (:func:`bind_quote`): a quote that is
ambiguous is widened to its sentence and then its segment; if it still does not bind to exactly one
segment the candidate is not emitted, so :func:`ground` never fails on this extractor's output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .extraction import (
    Candidate,
    ExtractionResult,
    ExtractionSource,
    GroundingError,
    MemoryKind,
    Segment,
    Subject,
    WorkflowCandidate,
    bind_quote,
    source_segments,
)
from .sensitivity import contains_secret, label_sensitivity

_I = re.IGNORECASE

# --------------------------------------------------------------------------- clause splitting
_SENTENCE_BREAK = re.compile(r"[.!?;:…]+(?=\s|$)")
_CLAUSE_BREAK = re.compile(
    r",\s*(?:(?:and|but|so|although|though|because|plus|or)\b\s*)?"
    r"|\s+(?:and|but|so)\s+(?=(?:I|I'm|I've|I'll|I'd|my|he|she|he's|she's|we)\b)"
    r"|\s+[-–—]+\s+"
)
_FILLER = re.compile(
    r"^(?:oh|well|so|and|but|also|anyway|by the way|btw|actually|right|yeah|yes|yep|okay|ok|um+|uh+|"
    r"like|honestly|basically|although|though|plus|then|and then|you know|i mean|still|see|now|"
    r"to be honest|fun fact|just so you know|oh and)\b[,\s]*",
    _I,
)
_REPORTED = re.compile(
    r"^(?:the|my)\s+(?P<who>doctor|dentist|physio|physiotherapist|therapist|cardiologist|gp|nurse|"
    r"dermatologist|optician|vet)\s+(?:said|says|told me|thinks|confirmed)\s+(?:that\s+)?",
    _I,
)


_JOINT_SUBJECT = re.compile(r"^(?:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|[Mm]y\s+[a-z]+)$")


@dataclass(frozen=True)
class _Clause:
    segment: Segment
    start: int
    end: int
    sentence: tuple[int, int]

    @property
    def text(self) -> str:
        return self.segment.text[self.start:self.end]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and (text[start].isspace() or text[start] in ",;:-–—\"'“”(){}[]"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:-–—.!?…\"'“”(){}[]"):
        end -= 1
    return start, end


def _clauses(segment: Segment) -> Iterator[_Clause]:
    text = segment.text
    cursor = 0
    sentence_spans: list[tuple[int, int]] = []
    for match in _SENTENCE_BREAK.finditer(text):
        sentence_spans.append((cursor, match.end()))
        cursor = match.end()
    sentence_spans.append((cursor, len(text)))
    for s_start, s_end in sentence_spans:
        sentence = _trimmed(text, s_start, s_end)
        if sentence[0] >= sentence[1]:
            continue
        piece_start = sentence[0]
        breaks = list(_CLAUSE_BREAK.finditer(text, sentence[0], sentence[1]))
        # "Lena and I went ...", "My brother and I ...": a bare subject before "and I" is not a clause.
        breaks = [m for m in breaks if not (m.group().strip() == "and" and m.start() > piece_start and
                                            _JOINT_SUBJECT.match(text[piece_start:m.start()].strip()) and
                                            re.match(r"I\b", text[m.end():]))]
        bounds = [(m.start(), m.end()) for m in breaks] + [(sentence[1], sentence[1])]
        for b_start, b_end in bounds:
            start, end = _trimmed(text, piece_start, b_start)
            # Strip leading fillers; the quote then starts at the meaningful words.
            while start < end:
                filler = _FILLER.match(text[start:end])
                if not filler or not filler.end():
                    break
                start += filler.end()
            start, end = _trimmed(text, start, end)
            if end > start:
                yield _Clause(segment, start, end, sentence)
            piece_start = b_end


# --------------------------------------------------------------------------- person and tense
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


def _third_person_rest(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


def _finish(content: str) -> str:
    content = _TRAILING_TIME.sub("", content.strip().rstrip(".!?,;: "))
    content = re.sub(r"\s+", " ", content).strip()
    return content[:1].upper() + content[1:] if content else content


def _about_user(body: str) -> str:
    """Rewrite a first-person clause ("I stopped eating meat") as "User stopped eating meat"."""
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
    possessive = re.match(r"my\b", body, _I)
    if possessive:
        return _finish("User's" + _third_person_rest(body[possessive.end():]))
    return _finish(_third_person_rest(body))


def _about_person(name: str, rest: str) -> str:
    """``rest`` follows the person's name or pronoun ("'s allergic to peanuts" -> "Tom is allergic ...")."""
    rest = re.sub(r"^'s\s+(?=(?:been|got|gotten|had|done|never|always|\w+ed)\b)", " has ", rest)
    rest = re.sub(r"^'s\b", " is", rest)
    rest = re.sub(r"\bmy\b", "the user's", rest, flags=_I)
    rest = re.sub(r"\bme\b", "the user", rest, flags=_I)
    rest = re.sub(r"\bI['’]m\b", "the user is", rest)
    rest = re.sub(r"\bI['’]ve\b", "the user has", rest)
    rest = re.sub(r"\bI\s+([\w']+)", lambda m: "the user " + _conjugate(m.group(1)), rest)
    return _finish(name + rest)


# --------------------------------------------------------------------------- vocabularies
_RELATIONS = (
    r"brother|sister|mom|mum|mother|dad|father|wife|husband|partner|boyfriend|girlfriend|son|daughter|"
    r"best friend|friend|boss|manager|colleague|coworker|co-worker|cousin|uncle|aunt|grandma|grandmother|"
    r"grandpa|grandfather|roommate|flatmate|fiancé|fiancée|fiance|fiancee|neighbou?r|stepmother|stepfather|"
    r"niece|nephew|therapist|doctor|teacher|mentor"
)
_NOT_A_NAME = _wordset(
    "i the a an this that it its something nothing everything yeah yes no nah so and but oh okay ok right "
    "sure great nice cool morning evening hey hi hello remember go also anyway like well thanks thank "
    "maybe just actually today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday "
    "january february march april may june july august september october november december there here "
    "what who how why when where we you they he she everyone someone somebody nobody everybody my our "
    "your his her their let please sorry ugh haha wow not still then if because although though did does "
    "do is are was were can could would should will anyway lol hmm um uh both all some none each every "
    "mostly night day week month year people everything good bad one two three dinner lunch breakfast "
    "work home life weather game"
)
_NAME = r"(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
_PERSON_PREDICATE = (
    r"(?P<rest>(?:'s|\s+is|\s+was)\s+(?:allergic|a|an|married|engaged|divorced|pregnant|vegetarian|vegan|"
    r"training|learning|studying|retired|lactose|diabetic|from|based|my|moving|starting|working|living)\b.*"
    r"|\s+(?:works|worked|lives|lived|moved|studies|studied|loves|likes|hates|owns|plays|teaches|runs|"
    r"drives|speaks|has|got|just|doesn't|does not|can't|cannot|never|always|used to|grew up|was born|"
    r"graduated|started|quit|joined|left)\b.*)"
)
_PERSON = re.compile(r"^" + _NAME + _PERSON_PREDICATE + r"$")
_PRONOUN_PERSON = re.compile(r"^(?P<pronoun>he|she)" + _PERSON_PREDICATE + r"$", _I)
_NAME_MENTION = re.compile(r"\b" + _NAME + r"\b")
_PLACE_BEFORE = re.compile(r"\b(?:to|in|at|from|near|around|across|via|into|through|visit|visited|visiting|"
                           r"called|named)\s+$", _I)
_YOUR_RELATION = re.compile(r"\byour\s+(?P<rel>" + _RELATIONS + r")\b", _I)
_ANSWER_BY_NAME = re.compile(r"^" + _NAME + r"\s+(?:does|doesn't|is|isn't|did|didn't|has|hasn't|will|can)\b")

_CHATTER = re.compile(
    r"\b(?:weather|rain(?:ing|y)?|sunny|grey|gray|cloudy|snowing|what's up|how are you|how's it going|"
    r"good morning|see you|bye|the game|haha|lol|missed it|no worries|never mind|sounds good)\b", _I)

_ACTION = re.compile(
    r"^(?:I\s+(?:(?:really|still|just|also|definitely)\s+)?(?:need to|have to|'ve got to|have got to|"
    r"got to|gotta|must|should|'ll need to|am supposed to|'m supposed to|'ll have to)|"
    r"(?:remind me to|don't forget to|remember to|I must remember to)|"
    r"I(?:'ll|\s+will)\s+(?=(?:send|call|email|finish|submit|review|book|buy|pick up|write|fix|schedule|"
    r"reply|follow up|check|prepare|update|share|pay|ping|text|renew|return|order)\b))\s*(?P<task>.+)$", _I)
_DUE = re.compile(
    r"\b(?:by|before|on|until|due|no later than)\s+(?P<due>(?:next\s+|this\s+)?(?:monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|tomorrow|tonight|today|weekend|week|month|end of (?:the\s+)?"
    r"(?:day|week|month))(?:\s+(?:morning|afternoon|evening|night))?|\d{1,2}(?::\d{2})?\s?(?:am|pm)"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*)\b",
    _I)
_TRAINING = re.compile(r"^I(?:'m|\s+am)\s+training\s+for\s+(?P<goal>.+)$", _I)
_AIM = re.compile(
    r"^(?:I(?:'m|\s+am)\s+(?:aiming|hoping|working)\s+(?:for|towards?|to)|I\s+aim\s+(?:for|to)|"
    r"my\s+goal\s+is(?:\s+to)?|I(?:'m|\s+am)\s+determined\s+to)\s+(?P<goal>.+)$", _I)
_CUTTING_DOWN = re.compile(r"\b(?:cutting|cut)\s+(?:down|back)\s+on\s+(?P<topic>[\w\s]+?)$", _I)

_RELATION_STATEMENT = re.compile(  # case-sensitive: the name must be capitalised
    r"^(?i:my)\s+(?P<rel>(?i:" + _RELATIONS + r"))(?i:'s\s+name)?(?:\s+(?i:is|was)|,)?\s+" + _NAME + r"\b")
_NAME_IS_MY = re.compile(r"^" + _NAME + r"\s+is\s+my\s+(?P<rel>" + _RELATIONS + r")\b")
_MY_ATTRIBUTE = re.compile(r"^my\s+(?P<attr>[a-z][a-z' -]{1,40}?)\s+(?:is|are|was|were)\s+(?P<value>.+)$", _I)
_PREFERENCE = re.compile(
    r"^I\s+(?:(?:really|absolutely|also|just|totally|kind of|kinda)\s+)?(?:love|like|enjoy|adore|hate|"
    r"dislike|prefer|can't stand|don't like|do not like|don't eat|don't drink|never eat|never drink|"
    r"can't eat|am into)\s+(?P<obj>.+)$|^I(?:'m|\s+am)\s+(?:really\s+)?(?:into|a (?:big |huge )?fan of)\s+"
    r"(?P<obj2>.+)$", _I)
_MEAT = re.compile(r"\b(?:stopped|quit|gave up)\s+eating\s+meat\b", _I)
# "I" followed by a contraction has no space ("I'm", "I've"): ``_ME`` accepts both spellings.
_ME = r"I(?:\s+|(?=['’]))"
_PLAN = re.compile(
    r"^" + _ME + r"(?:really\s+)?(?:want|plan|intend|hope|['’]d (?:really )?(?:like|love)|would (?:really )?"
    r"(?:like|love)|am going|['’]m going|am planning|['’]m planning|['’]m gonna|am gonna|['’]m hoping|"
    r"am hoping)\s+(?:to|on)\s+(?!(?:bed|sleep|the|a|an|my|your|his|her|their|our|this|that|be|work|school|"
    r"home|go|grab|head|call|text|check|miss|say|try|see|have|get|eat|it)\b)"
    r"|^" + _ME + r"(?:am|['’]m)\s+(?:(?:seriously|really|also)\s+)?(?:thinking (?:about|of)|considering|"
    r"looking (?:into|for)|saving (?:up )?for)\s+(?:\w+ing|getting|a|an)\b", _I)
_DURABLE_VERB = re.compile(
    r"^" + _ME + r"(?:(?:" + "|".join(_ADVERBS) + r")\s+)*(?:moved|relocated|live|lived|grew up|was born|work|worked|"
    r"study|studied|started|stopped|quit|finished|completed|shipped|launched|joined|graduated|got married|"
    r"got engaged|married|adopted|bought|sold|built|founded|switched|became|retired|learned|learnt|speak|"
    r"teach|climb|run|swim|cycle|bike|play|practice|practise|cook|bake|meditate|volunteer|own|drive|"
    r"ride|hike|paint|write|read|collect|eat|drink|go to|visit|use|have a|have an|have two|have three|"
    r"['’]ve been|have been|['’]ve lived|have lived|['’]ve worked|have worked|['’]ve had|have had|"
    r"['’]ve known|have known|['’]ve always|have always|['’]ve never|have never)\b", _I)
_AM = re.compile(r"^I(?:['’]m|\s+am)\s+(?P<rest>.+)$", _I)
_STATE_OK = re.compile(
    r"^(?:a|an)\s+(?!bit\b|little\b|lot\b|mess\b)\w+|^(?:allergic|from|based|on\s(?!(?:my|the|our) way\b)|vegetarian|vegan|married|"
    r"engaged|divorced|single|pregnant|retired|left-handed|right-handed|lactose|gluten|diabetic|"
    r"self-employed|unemployed|learning|studying|living|working|moving|starting|switching|cutting|"
    r"quitting|saving|buying|selling|renovating|building|writing|training|taking|leaving|joining|"
    r"getting married|expecting|trying to (?:learn|quit|lose|save|get)|leading|managing|running (?:a|an|the|my)|"
    r"organi[sz]ing|coaching|teaching|volunteering|mentoring|raising|growing|renting|sharing|dating|"
    r"applying|preparing (?:for|a|an)|doing (?:a|an|my)|travell?ing|attending|hosting|practi[sc]ing|"
    r"fostering|caring for|looking after|involved|part of|a member|fluent|originally from|"
    r"(?:passionate|keen|interested|obsessed|good|great|terrible|afraid|scared|terrified)\s+(?:about|on|in|with|"
    r"at|of))\b", _I)
_STATE_PREFERENCE = re.compile(r"^(?:passionate|keen|interested|obsessed)\b", _I)
_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_HABIT_MARK = re.compile(
    r"\b(?:every\s+(?:other\s+)?(?:day|night|morning|evening|week|weekend|month|year|summer|winter|"
    r"spring|autumn|fall|" + _DAYS + r")|each\s+(?:day|week|month|year|morning|evening|" + _DAYS + r")|"
    r"(?:once|twice|(?:two|three|four|five|six|\d+)\s+times)\s+a\s+(?:day|week|month|year)|"
    r"(?:on|at)\s+(?:the\s+)?(?:weekends?|" + _DAYS + r")|most\s+(?:days|nights|mornings|evenings|weekends|"
    r"weeks|" + _DAYS + r")|daily|weekly|monthly|regularly|whenever)\b", _I)
_HABIT_ADVERB = r"(?:usually|often|always|normally|regularly|generally|sometimes|rarely|mostly|never|typically)"
# Verbs after "I" that say something about the conversation, not about the owner's life.
_NOT_HABIT_VERB = _wordset(
    "am was were had did do don't didn't can could would should will might must think thought guess mean "
    "know knew hope wish feel felt said say told tell suppose bet agree see saw wonder forget forgot mind "
    "get got just really also still totally")
_HABIT = re.compile(
    r"^" + _ME + r"(?:(?:" + _HABIT_ADVERB + r"|also|still)\s+)*(?P<verb>[a-z]+)\b", _I)
_HABIT_BY_ADVERB = re.compile(
    r"^" + _ME + r"(?:(?:also|still)\s+)?" + _HABIT_ADVERB + r"\s+(?P<verb>[a-z]+)\b", _I)
# Experiences: something the owner did, went through or received (past tense, with a real object).
_EVENT_VERBS = (
    r"went\s+(?!(?:home|back|to\s+bed|to\s+sleep|out\s+for\s+a\s+bit|quiet|wrong|well|ok|okay|fine|through\s+it|"
    r"for\s+it|with\s+it|on|off)\b)|visited|travell?ed|toured|explored|camped|hiked|backpacked|"
    r"took\s+(?:up|part|a|an|my|some|on|over)|tried\s+(?:out|a|an|the|\w+ing)|signed\s+up|won|received|earned|"
    r"got\s+(?:a|an|the|my|into|married|engaged|divorced|promoted|accepted|admitted|hired|certified|back\s+from|"
    r"\d)|attended|ran\s+(?:a|an|the|my|\d)|passed|met|celebrated|organi[sz]ed|hosted|published|gave\s+up|"
    r"began|decided\s+to|applied|spent|lost\s+(?:my|a|an|the)|broke\s+(?:my|a)|volunteered|competed|"
    r"performed|participated|enrolled|trained|planted|renovated|picked\s+up|painted|baked|made\s+(?:a|an|my)|"
    r"wrote|recorded|launched|opened|created|designed|rescued|fostered|welcomed|had\s+(?:a|an|my|our)\s+"
    r"(?:baby|son|daughter|wedding|surgery|operation|accident|job|interview|first)"
)
_EVENT = re.compile(r"^" + _ME + r"(?:(?:" + "|".join(_ADVERBS) + r")\s+)*(?:" + _EVENT_VERBS + r")\b", _I)
_WE_EVENT = re.compile(r"^(?-i:[Ww]e)\s+(?P<rest>(?:(?:" + "|".join(_ADVERBS) + r")\s+)*(?:" + _EVENT_VERBS
                       + r"|moved|adopted|bought|got\s+married|started|finished|built|launched)\b.*)$", _I)
_WITH_ME = re.compile(
    r"^(?P<who>(?i:my)\s+(?i:" + _RELATIONS + r"|kids|children|family|parents|friends|team|dog|cat)|"
    r"(?-i:[A-Z][a-z]+))\s+and\s+I\s+(?P<rest>(?:(?:" + "|".join(_ADVERBS) + r")\s+)*(?:" + _EVENT_VERBS
    + r"|moved|adopted|bought|got\s+married|started|finished|built|launched|live|work|run|play|go|have been|"
    r"['’]ve been)\b.*)$")
_MY_VERB = re.compile(
    r"^my\s+(?P<attr>[a-z][a-z'-]{1,20}(?:\s+[a-z][a-z'-]{1,20})?)\s+(?!(?:feels|looks|seems|sounds|says|said|"
    r"thinks|thought|told|asked|called|texted|wants|wanted|keeps|kept|is|are|was|were|and|or|but)\b)"
    r"(?P<verb>[a-z]+s|live|work|love|like|hate|own|run|play|have|had|got|went|grew\s+up|met|[a-z]+ed)\b\s+\S", _I)
# A time or frequency phrase before the subject: "Every Monday I drive ...", "Last year my sister ...".
_LEAD_TIME = re.compile(
    r"^(?P<adv>(?:every|each|most|on|at|last|this|in|since|over|during|after|before|back in|growing up|"
    r"as a (?:kid|child|teenager))\b(?!\s+(?:the other hand|case|fact|general|particular|that case|my opinion|"
    r"any case|short|total|a way|the end)\b)[^,.!?]{0,40}?|yesterday|recently|lately|nowadays|these days|"
    r"sometimes|usually|often|always|twice|once)\s*,?\s+(?=(?-i:I|I['’]\w+|[Mm]y|[Ww]e)\b)", _I)
_DURATION = re.compile(r"\b(?:for\s+(?:about\s+|almost\s+|nearly\s+|over\s+|more than\s+)?(?:a|an|one|two|"
                       r"three|four|five|six|seven|eight|nine|ten|a few|several|many|\d+)\s+(?:days?|weeks?|"
                       r"months?|years?|decades?)|since\s+\w+)\b", _I)
# A question to the owner ("Are you still vegetarian?", "How far do you run?") and its short answer.
_YOU_QUESTION = re.compile(
    r"(?:^|(?<=[.!?,]\s))(?:(?:so|and|but)\s+)?(?P<wh>how\s+(?:far|often|long|much|many\s+\w+)|where|when)?\s*"
    r"(?P<aux>do|are|have)\s+you\s+(?P<still>still\s+)?(?P<pred>[a-z][\w' -]{2,60}?)"
    r"(?:\s+(?:now|these days|nowadays|at the moment))?\s*\?\s*$", _I)
_YES = re.compile(r"^(?:yes|yeah|yep|yup|definitely|absolutely|still am|i am|i do|i have)\b[\s,!.:-]*", _I)
_NUMBERISH = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|"
                        r"thirty|forty|fifty|hundred|a few|several|once|twice|half)\b", _I)
_OWNER_START = re.compile(r"^(?:I|I['’]\w+|my|we|he|she|they|it|it's|that|this|there|no|not|nope|nah)\b", _I)
_FUTURE = re.compile(r"\b(?:next|tomorrow|soon|later this|in (?:a|two|three|\d+) (?:weeks?|months?|years?))\b", _I)

_TOPICS = (
    ("work", re.compile(
        r"\b(?:work|works|worked|job|office|colleagues?|coworkers?|manager|boss|team|project|migration|rewrite|"
        r"deploy\w*|release|client|customers?|meeting|stand-?up|sprint|draft|nurse|engineer|developer|"
        r"career|promotion|shifts?|hospital|company|startup|billing|codebase|feature|launch\w*)\b", _I)),
    ("hobbies", re.compile(
        r"\b(?:climb\w*|marathon|running|runs?|hik\w+|guitar|piano|paint\w*|chess|gym|training|cycl\w+|"
        r"swim\w*|yoga|ski\w*|surf\w*|photograph\w*|garden\w*|knit\w*|football|soccer|tennis|basketball)\b",
        _I)),
    ("lifestyle", re.compile(
        r"\b(?:eat\w*|meat|vegetarian|vegan|diet|coffee|tea|moved|lives?|living|sleep\w*|car|house|apartment|"
        r"flat|cook\w*|food|drink\w*|time|city|neighbou?rhood)\b", _I)),
)


def _category(kind: str, content: str, labels: frozenset[str]) -> str:
    if kind == "relationship" or "health" in labels:
        return "core"
    for name, pattern in _TOPICS:
        if pattern.search(content):
            return name
    return "interests" if kind == "preference" else "core"


_THIRD_PARTY_HABIT = re.compile(
    r"^(?P<who>(?i:he|she)(?=\s)|" + _NAME + r")\s+(?:(?i:" + _HABIT_ADVERB + r"|also|still)\s+)?(?P<verb>[a-z]+s)\b")
_NOT_THIRD_PARTY_VERB = _wordset("is was has does says thinks always sometimes usually often")


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
    kind: MemoryKind | None = None
    content = ""
    category: str | None = None
    if _ACTION.match(body) or _AIM.match(body):
        return None
    if _MEAT.search(body) and body.lower().startswith("i "):
        kind, content = "preference", "User is vegetarian and " + _about_user(body)[len("User "):]
    elif _PREFERENCE.match(body):
        pref = _PREFERENCE.match(body)
        obj = ((pref.group("obj") or pref.group("obj2") or "") if pref else "").strip().lower()
        if obj in {"it", "that", "this", "them", "you", "so", "too"}:
            return None
        kind, content = "preference", _about_user(body)
    elif _PLAN.match(body):
        kind, content = "plan", _about_user(body)
    elif _is_habit(body):
        kind, content, category = "fact", _about_user(body), "habits"
    elif _MY_ATTRIBUTE.match(body) or _DURABLE_VERB.match(body) or _MY_VERB.match(body) or _EVENT.match(body):
        if re.match(r"^" + _ME + r"(?:['’]ve|have)\s+been\s+(?:doing|at)\s+(?:it|this|that)\b", body, _I) \
                and not _DURATION.search(body):
            return None  # "I've been doing it" says nothing on its own
        kind, content = "fact", _about_user(body)
    elif _WE_EVENT.match(body) or _WITH_ME.match(body):
        kind, content = "fact", _joint(body)
    else:
        am = _AM.match(body)
        if am and _STATE_OK.match(am.group("rest")):
            rest = am.group("rest")
            future = re.match(r"(?:going|planning|moving|starting|buying|selling|switching|leaving|"
                              r"joining|getting)\b", rest, _I) and _FUTURE.search(rest)
            kind = "plan" if future or rest.lower().startswith("training") else "fact"
            if _STATE_PREFERENCE.match(rest):
                kind = "preference"
            content = _about_user(body)
    if kind is None or len(content.split()) < 3:
        return None
    return kind, content, category


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
    if question.group("wh"):
        if aux != "do" or _OWNER_START.match(answer) or not _NUMBERISH.search(answer):
            return None
        verb, _, tail = pred.partition(" ")
        rest = (" " + tail if tail else "") + " " + answer[:1].lower() + answer[1:]
        content = f"User {still}{_conjugate(verb)}{rest}"
    else:
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
        content = f"{head}, {tail}"
    content = _finish(_third_person_rest(content))
    if len(content.split()) < 4:
        return None
    clause = _Clause(segment, start, end, (start, end))
    return _Draft(content, "fact", "user", None, ((clause, start, end),))


# --------------------------------------------------------------------------- the extractor
@dataclass
class _Draft:
    content: str
    kind: MemoryKind
    subject: Subject
    subject_label: str | None
    quotes: tuple[tuple[_Clause, int, int], ...]  # (clause, start, end) spans in the clause's segment
    category: str | None = None  # None: derived from the content's topic


class RuleExtractor:
    """Deterministic extraction of durable first-person statements (see the module docstring)."""

    extractor_id = "rules"
    extractor_version = "3"  # 2: habits, experiences, short answers, pronoun fixes;
    # 3: named other speakers, a fallback for first-person statements no specific rule knows

    def extract(self, source: ExtractionSource) -> ExtractionResult:
        segments = source_segments(source)
        drafts: list[_Draft] = []
        actions: list[tuple[WorkflowCandidate, _Clause]] = []
        goals: list[tuple[WorkflowCandidate, _Clause]] = []
        last_name: str | None = None
        last_cutting_topic: str | None = None
        previous: Segment | None = None
        for segment in segments:
            if not segment.is_user:
                name = _speaker_name(segment.speaker)
                if name is not None:
                    drafts.extend(self._speaker_memories(segment, name))
                previous = segment
                continue
            echoed = _echo(segment, previous)
            if echoed is not None:
                drafts.append(echoed)
            for clause in _clauses(segment):
                body = clause.text
                if contains_secret(body):
                    continue  # a clause that discloses a credential is never a memory
                # A capitalised word after "to/in/from/visit ..." is a place ("to Iceland"), not a person
                # that a later "he"/"she" could refer to.
                mention = next((m for m in _NAME_MENTION.finditer(body)
                                if not _PLACE_BEFORE.search(body, 0, m.start())), None)
                if mention and mention.group("name").split()[0].lower() not in _NOT_A_NAME:
                    name_here = mention.group("name")
                else:
                    name_here = None
                found = self._workflow(clause, last_cutting_topic)
                if found is not None:
                    (actions if found.kind == "action_item" else goals).append((found, clause))
                cutting = _CUTTING_DOWN.search(body)
                if cutting:
                    last_cutting_topic = cutting.group("topic").strip()
                if found is not None and found.kind == "action_item":
                    pass  # action items are not memories
                else:
                    drafts.extend(self._memories(clause, previous, last_name))
                if name_here:
                    last_name = name_here
            previous = segment
        return ExtractionResult(
            memories=self._finalise(segments, drafts),
            action_items=self._bound_workflow(segments, actions),
            goals=self._bound_workflow(segments, goals),
            extractor_id=self.extractor_id,
            extractor_version=self.extractor_version,
        )

    # ----------------------------------------------------------------- workflow
    @staticmethod
    def _workflow(clause: _Clause, cutting_topic: str | None) -> WorkflowCandidate | None:
        body = clause.text
        lead = _LEAD_TIME.match(body)
        if lead and len(body) > lead.end():
            body = body[lead.end():]  # "Every Friday I need to ..." is still an action item
        action = _ACTION.match(body)
        if action:
            task = action.group("task").strip()
            if len(task.split()) < 2 or _CHATTER.search(task):
                return None
            due = _DUE.search(task)
            return WorkflowCandidate(kind="action_item", description=_finish(task), quote=body,
                                     due=due.group("due") if due else None)
        training = _TRAINING.match(body)
        if training:
            return WorkflowCandidate(kind="goal", description=_finish("Train for " + training.group("goal")),
                                     quote=body, due=None)
        aim = _AIM.match(body)
        if aim:
            goal = aim.group("goal").strip()
            if len(goal.split()) <= 3 and cutting_topic:
                description = f"Cut down on {cutting_topic} to {goal}"
            else:
                description = ("Aim for " if body.lower().find(" for ") >= 0 and len(goal.split()) <= 3
                               else "") + goal
            return WorkflowCandidate(kind="goal", description=_finish(description), quote=body, due=None)
        return None

    # ----------------------------------------------------------------- memories
    @staticmethod
    def _memories(clause: _Clause, previous: Segment | None, last_name: str | None) -> list[_Draft]:
        text = clause.segment.text
        body = clause.text
        whole = ((clause, clause.start, clause.end),)
        reported = _REPORTED.match(body)
        suffix = ""
        if reported:
            suffix = f", according to their {reported.group('who').lower()}"
            body = body[reported.end():]
        lead = None if reported else _LEAD_TIME.match(body)
        when = ""
        if lead and len(body) > lead.end():
            adverb = lead.group("adv")
            when = " " + adverb[:1].lower() + adverb[1:]
            body = body[lead.end():]
        suffix = when + suffix

        # A named person answering "your brother ...?": a relationship of the owner.
        answer = _ANSWER_BY_NAME.match(body)
        drafts: list[_Draft] = []
        if answer and answer.group("name").split()[0].lower() not in _NOT_A_NAME and previous is not None:
            relation = _YOUR_RELATION.search(previous.text)
            if relation:
                name = answer.group("name")
                prev_clause = _sentence_around(previous, relation.start())
                drafts.append(_Draft(f"{name} is the user's {relation.group('rel').lower()}", "relationship",
                                     "third_party", name, (prev_clause, (clause, clause.start,
                                                                         clause.start + answer.end()))))

        if _CHATTER.search(body) and not _PREFERENCE.match(body):
            return drafts

        person = _PERSON.match(body)
        if person and person.group("name").split()[0].lower() not in _NOT_A_NAME:
            name = person.group("name")
            kind: MemoryKind = "relationship" if re.search(r"\bmy\s+(?:" + _RELATIONS + r")\b", body, _I) \
                else "fact"
            drafts.append(_Draft(_about_person(name, person.group("rest")) + suffix, kind, "third_party",
                                 name, whole))
            return drafts
        pronoun = _PRONOUN_PERSON.match(body)
        if pronoun:
            if not last_name:
                return drafts
            # Quote from the clause that named the person when it is in the same sentence.
            span_start = clause.start
            named_at = text.rfind(last_name, clause.sentence[0], clause.start)
            if named_at >= 0:
                span_start = named_at
            drafts.append(_Draft(_about_person(last_name, pronoun.group("rest")) + suffix, "fact",
                                 "third_party", last_name, ((clause, span_start, clause.end),)))
            return drafts

        habit = _THIRD_PARTY_HABIT.match(body) if _HABIT_MARK.search(body) else None
        if habit and habit.group("verb").lower() not in _NOT_THIRD_PARTY_VERB:
            name = habit.group("name")
            span_start = clause.start
            if name is None:
                # "he/she": only when the person was named earlier in this same turn.
                named_at = text.rfind(last_name, 0, clause.start) if last_name else -1
                if named_at < 0 or last_name is None:
                    return drafts
                # The quote runs from the name to this clause, so it shows who "he"/"she" is.
                name, span_start = last_name, named_at
            elif name.split()[0].lower() in _NOT_A_NAME:
                name = None
            if name is not None:
                drafts.append(_Draft(_about_person(name, body[habit.end("who"):]) + suffix, "fact",
                                     "third_party", name, ((clause, span_start, clause.end),), "habits"))
                return drafts

        relation = _RELATION_STATEMENT.match(body) or _NAME_IS_MY.match(body)
        if relation and relation.group("name").split()[0].lower() not in _NOT_A_NAME:
            name = relation.group("name")
            drafts.append(_Draft(f"{name} is the user's {relation.group('rel').lower()}", "relationship",
                                 "third_party", name, whole))
            # "My cousin Meera lives in Marseille": what the sentence says about the person, too.
            rest = body[relation.end():]
            if relation.re is _RELATION_STATEMENT and len(rest.split()) >= 2 and not _CHATTER.search(rest):
                drafts.append(_Draft(_about_person(name, rest) + suffix, "fact", "third_party", name, whole))
            return drafts

        found = _self_disclosure(body)
        if found is not None:
            kind_user, content, category = found
            drafts.append(_Draft(content + suffix, kind_user, "user", None, whole, category))
        elif (generic := _generic_disclosure(clause, body)) is not None:
            drafts.append(_Draft(generic + suffix, "fact", "user", None, whole))
        return drafts

    @staticmethod
    def _speaker_memories(segment: Segment, name: str) -> list[_Draft]:
        """First-person facts a named other speaker states about themselves ("I started learning the
        cello" said by Jonas -> "Jonas started learning the cello"): ``third_party``, labelled with the
        speaker's name. A clause that mentions "you" is about the owner or the conversation and is
        left to the owner's own turns; action items and goals are never another speaker's."""
        drafts: list[_Draft] = []
        for clause in _clauses(segment):
            body = clause.text
            if contains_secret(body) or _ADDRESSES_OWNER.search(body):
                continue
            if _CHATTER.search(body) and not _PREFERENCE.match(body):
                continue
            lead = _LEAD_TIME.match(body)
            when = ""
            if lead and len(body) > lead.end():
                adverb = lead.group("adv")
                when = " " + adverb[:1].lower() + adverb[1:]
                body = body[lead.end():]
            found = _self_disclosure(body)
            generic = _generic_disclosure(clause, body) if found is None else None
            if found is not None:
                kind, content, category = found
            elif generic is not None:
                kind, content, category = "fact", generic, None
            else:
                continue
            if not content.startswith("User"):
                continue
            content = _EMPHATIC_MYSELF.sub("", content)
            drafts.append(_Draft(name + content[len("User"):] + when, kind, "third_party", name,
                                 ((clause, clause.start, clause.end),), category))
        return drafts

    # ----------------------------------------------------------------- binding
    @staticmethod
    def _finalise(segments: tuple[Segment, ...], drafts: list[_Draft]) -> tuple[Candidate, ...]:
        out: list[Candidate] = []
        seen: set[tuple[str, str | None]] = set()
        for draft in drafts:
            quotes: list[str] = []
            for clause, start, end in draft.quotes:
                quote = _unique_quote(segments, clause, start, end)
                if quote is None:
                    break
                quotes.append(quote)
            else:
                key = (draft.content.casefold(), draft.subject_label)
                if key in seen or not draft.content:
                    continue
                if contains_secret(draft.content) or any(contains_secret(q) for q in quotes):
                    continue
                labels = label_sensitivity(" ".join((draft.content, *quotes)))
                seen.add(key)
                out.append(Candidate(
                    content=draft.content, kind=draft.kind,
                    category=draft.category or _category(draft.kind, draft.content, labels),
                    subject=draft.subject, subject_label=draft.subject_label,
                    quotes=tuple(quotes), sensitivity=labels,
                ))
        return tuple(out)

    @staticmethod
    def _bound_workflow(segments: tuple[Segment, ...],
                        found: list[tuple[WorkflowCandidate, _Clause]]) -> tuple[WorkflowCandidate, ...]:
        out: list[WorkflowCandidate] = []
        for candidate, clause in found:
            quote = _unique_quote(segments, clause, clause.start, clause.end)
            if quote is not None and candidate not in out:
                out.append(WorkflowCandidate(kind=candidate.kind, description=candidate.description,
                                             quote=quote, due=candidate.due))
        return tuple(out)


def _sentence_around(segment: Segment, index: int) -> tuple[_Clause, int, int]:
    for clause in _clauses(segment):
        if clause.sentence[0] <= index < clause.sentence[1]:
            start, end = _trimmed(segment.text, *clause.sentence)
            return clause, start, end
    start, end = _trimmed(segment.text, 0, len(segment.text))
    return _Clause(segment, start, end, (start, end)), start, end


def _unique_quote(segments: tuple[Segment, ...], clause: _Clause, start: int, end: int) -> str | None:
    """The narrowest of clause / sentence / segment text that binds to exactly one segment."""
    text = clause.segment.text
    sentence = _trimmed(text, *clause.sentence)
    options = (text[start:end], text[min(start, sentence[0]):max(end, sentence[1])], text.strip())
    for option in options:
        if contains_secret(option):
            return None  # widening must never pull a secret into a quote
        try:
            if bind_quote(segments, option).id == clause.segment.id:
                return option
        except GroundingError:
            continue
    return None


__all__ = ["RuleExtractor"]
