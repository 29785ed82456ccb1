"""The vocabularies and clause patterns the rules match (relations, names, habits, events, plans,
questions, topics) and the category a topic gives a memory."""

from __future__ import annotations

import re

from .clauses import _I
from .phrasing import _ADVERBS, _wordset

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
    r"^I\s+(?:(?:really|absolutely|also|just|totally|kind of|kinda|do|still)\s+)*(?:love|like|enjoy|adore|hate|"
    r"dislike|prefer|can't stand|don't like|do not like|don't eat|don't drink|never eat|never drink|"
    r"can't eat|am into)\s+(?P<obj>.+)$|^I(?:['’]m|\s+am)\s+(?:(?:really|totally|so|super|also|just|pretty|kind of|"
    r"kinda|still|big\s+time)\s+)*(?:into|a (?:big |huge )?fan of)\s+"
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
