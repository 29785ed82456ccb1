"""Words that tell of a change in the owner's own state, as the rule extractor reads a sentence.

The rule extractor keeps a sentence that tells of such a change or states a value, so that the first
conversation states what a later one can end. These are heuristics of the rules extractor, not the
memory model: no ending is decided here (core.domain.slots decides every ending).
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.adapters.rules.similarity import content_words

# The content words the router's similarity compares (stop words out, crude plural folding).
_tokens = content_words


# A statement that ends a state: what follows the verb is what ended ("sold the Volvo", "quit their
# job at Acme", "moved out of the Seattle flat", "broke up with Sam", "is no longer vegetarian").
_ENDING = re.compile(
    r"\b(?:sold|gave\s+away|got\s+rid\s+of|traded\s+in|scrapped|quit|left(?!\s+(?:my|the|their|his|her|a|an|our)\s+"
    r"(?!job|position|role|post|husband|wife|boyfriend|girlfriend|partner)[\w-]+(?:\s+[\w-]+)?\s+(?:at|in|inside|on|behind|"
    r"charging|outside|under)\b)|resigned\s+from|"
    r"retired\s+from|was\s+laid\s+off\s+(?:from|by)|was\s+fired\s+from|lost\s+(?:their|his|her)\s+job\s+at|"
    r"moved\s+(?:out\s+of|away\s+from|out\s+from)|no\s+longer\s+lives\s+in|broke\s+up\s+with|"
    r"split\s+up\s+with|separated\s+from|divorced|stopped(?!\s+(?:at|by|in|off|for|over|to|on))|gave\s+up|no\s+longer|cancell?ed|"
    r"dropped\s+out\s+of|ended\s+(?:things|it|their\s+relationship)\s+with|finished\s+with)\b"
    r"(?P<obj>(?:(?!\b(?:and|so|but|because|then|now)\b)[^(.;,])*)", re.IGNORECASE)


# Words before the verb that make it no ending: a plan, a wish, a question, a negation, a past habit.
_HEDGE = re.compile(
    r"\b(?:might|may|could|would|will|wants?\s+to|wanted\s+to|plans?\s+to|planning|considering|thinking|"
    r"thought\s+about|hopes?\s+to|going\s+to|about\s+to|if|whether|never|not|didn['’]?t|doesn['’]?t|hasn['’]?t|haven['’]?t|"
    r"almost|nearly|tried\s+to|trying\s+to|soon|someday|assum\w*|think|thinks|asking|asked\s+if|wonder\w*|rumou?r\w*)\b",
    re.IGNORECASE)


# Words of an ended object that say nothing about which fact it ended.
_VAGUE = frozenset(re.findall(r"\S+", (
    "my our your last week month year ago now recently yesterday today earlier this past few couple "
    "days weeks months years time back finally after before since then again all together altogether "
    "everywhere instead because which who where when there here one new old first second other same "
    "way lot bit much many some any every more most really also still even already whole")))


# A change told in passing, as people talk ("handed in my notice at Crumb & Co", "we broke up", "no
# car anymore", "moved off campus"): the whole statement names what changed.
_CHANGE = re.compile(
    r"\b(?:sold|selling|gave\s+away|got\s+rid\s+of|written\s+off|got\s+stolen|was\s+stolen|put\s+\w+\s+down|"
    r"passed\s+away|passed\s+in|died|handed\s+in\s+(?:my|their|his|her)\s+notice|gave\s+\w+\s+(?:my|their|his|her)\s+"
    r"(?:two\s+weeks|notice)|notice\s+at|resigned|retired|laid\s+off|got\s+fired|unemployed|leaving|"
    r"closed(?=\s*(?:$|[.!,;]|down|for\s+good))|(?:are|got)\s+(?:actually\s+|finally\s+)?married\s+now|"
    r"moved\s+(?:out|away|off|into|here|there|in)|moved\b(?=\W*(?:i'm|we're|i\s+am|now))|relocated|packed\s+up|"
    r"anymore|any\s+more|no\s+longer|not\s+going\s+back|someone\s+else's\s+problem|broke\s+up|split\s+up|split|"
    r"separated|divorced?|ex-(?:wife|husband|girlfriend|boyfriend|partner)|switched\s+(?:to|from)|gave\s+up|"
    r"called\s+(?:it\s+)?(?:off|quits)|dumped|ended\s+things|engagement['’]?s\s+off|single\s+again|co-parenting|"
    # a thing gone to someone else, a habit given up or taken back up, said another way
    r"(?:who|that)\s+bought\s+(?:my|our|their)|(?:days|time)\s+(?:are|is)\s+(?:done|over)|moved\s+back|got\s+[£$€]?\d+\s*(?:quid|pounds|dollars|bucks|euros|k)?\s+for|"
    r"gave\s+(?:me|us|them)\s+[£$€]?\d+\s*\w*\s+for|new\s+owners?|rehom\w+|binned|threw\s+(?:my|our|the)\s+[\w\s]{1,30}?\s+"
    r"(?:in|into)\s+the\s+bin|(?:smoke|alcohol|booze|sugar|meat|caffeine|vape|nicotine|drink)[\s-]free|"
    r"back\s+in\s+(?:my|their)\s+life|packed\s+in|done\s+(?:with|at)|let\s+go|made\s+redundant|folded|job\s+hunting|"
    r"handed\s+(?:the\s+|my\s+|their\s+)?keys\s+back|not\s+working\s+(?:at|for)|(?:the|our|my|their)\s+move\s+(?:back\s+)?to|"
    r"went\s+(?:vegan|vegetarian|veggie)|no\s+\w+ing\s+at\s+all|not\s+\w+ing\s+at\s+all|uninstalled|"
    r"stopped(?!\s+(?:at|by|in|off|for|over|to|on))|quit|took\s+an?\s+[\w-]+(?:\s+[\w-]+)?\s+job|started\s+at|new\s+job|"
    # an ending said another way: traded or given away, let go, promoted off, fell off the wagon,
    # nothing for ages, no more of it, off the table
    r"traded\s+in|swapped|gave\s+(?:the|my|our|their|all\s+the|away)\b(?:\s+[\w-]+)?|let\s+(?:me|us|them)\s+go|"
    r"promoted|fell\s+off|in\s+ages|for\s+ages|no\s+more|off\s+the\s+table|fell\s+for|converted|"
    r"haven['’]?t\s+(?:touched|had|done|played|smoked|been)|"
    # a new state that replaces the old one: "from now on", "these days", "i'm an aisle person now",
    # "it's Wet Leg now", "so it's swimming now", "i work from home now"
    r"years\s+of\s+[\w\s-]+?,?\s+done\b|getting\s+out\s+of|got\s+out\s+of|"
    r"(?:got|bought)\s+(?:myself\s+|themselves\s+)?(?:a|an)\s+(?:new\s+)?(?:phone|iphone|pixel|samsung|galaxy|android)|from\s+now\s+on|these\s+days|nowadays|for\s+good|got\s+engaged|(?:my|our|their)\s+engagement|"
    r"(?:my|our|their)\s+(?:[\w-]+\s+){0,2}anniversary|"
    r"(?:i['’]?m|i\s+am|we['’]re|we\s+are|it['’]s|its|i|we|they['’]re|they|user|user\s+is)\s+(?:[\w'’-]+\s+){0,6}?now(?!\s+(?:and|or|that|on)\b))\b",
    re.IGNORECASE)


# A compatible addition, not a change: "i also really like Becky Chambers now", "even more now",
# "a second car", "on top of it".
_ADDITION = re.compile(r"\b(?:also|too(?=\s*(?:[.,!?;]|$))|as\s+well|even\s+more|on\s+top\s+of|second|another|both)\b", re.IGNORECASE)


# The change is someone else's ("my brother sold his Fiesta"), or the fact goes on ("still", "never
# selling"), or it is talk of the past before the fact ("used to", "before").
_PEOPLE = (r"brothers?|sisters?|friends?|mates?|buddy|buddies|pals?|husband|wife|partner|girlfriend|boyfriend|"
           r"mum|mom|mam|dad|father|mother|parents?|son|daughter|kids?|children|cousins?|colleagues?|co-?workers?|"
           r"boss|manager|ex|neighbou?rs?|flatmates?|housemates?|roommates?|uncle|aunt|auntie|gran|granny|grandma|"
           r"grandad|grandpa|nan|nana|niece|nephew|in-laws|teacher|coach|trainer|tutor|landlord|landlady|"
           r"classmates?|team-?mates?|fianc[eé]e?|bestie|family|folks")


_OTHERS = re.compile(
    r"(?:\b(?:my|our|their|his|her)|\buser['’]s)\s+(?:(?:best|old|little|big|older|younger|new|running|gym|"
    r"violin|piano|guitar|work|uni|school)\s+)*(?:" + _PEOPLE + r")\b|"
    r"\b(?:one|some|two|three|all|both|most)\s+of\s+(?:my|our|the)\s+\w+|\bthe\s+neighbou?rs?['’]?s?\b|"
    r"\b(?!(?:it|that|what|there|here|who|where|he|she|let|user|today|tonight|everyone|everybody|nobody|"
    r"somebody|someone|one)['’]s\b)[a-z]+['’]s\s+(?:ex|husband|wife|boyfriend|girlfriend|partner|job|new\s+job|"
    r"house|flat|car|dog|cat|divorce|wedding)\b|"
    r"\b(?:he|she)\s+(?:just\s+|has\s+|had\s+|finally\s+)?(?:sold|quit|left|moved|got|started|joined|switched|"
    r"took|retired|resigned|changed|is\s+starting|is\s+leaving|'s\s+(?:quit|left|started|moved))\b|"
    r"\b(?:he['’]s|she['’]s|he\s+is|she\s+is)\s+(?:not|no\s+longer)\b", re.IGNORECASE)


# someone else's change, told by whose thing it ended ("niamh quit her job")
_OTHERS_AFTER = re.compile(r"^\s*(?:[\w-]+\s+)?(?:her|his)\b", re.IGNORECASE)


_GOES_ON = re.compile(r"\b(?:still(?!\s+(?:can't|cannot|doesn't|don't|isn't|getting|killing|miss))|used\s+to|never\s+selling|not\s+going\s+anywhere|"
                      r"thinking|what\s+if|if\s+i|maybe|someday|daydream\w*|curious)\b", re.IGNORECASE)


# "now" of this moment, not of a new state: "I'm at the gym now", "we're driving now", "I have to go
# now", "right now".
_MOMENT = re.compile(
    r"^(?:(?:i['’]?m|i\s+am|we['’]re|we\s+are|they['’]re|they\s+are|user\s+is)\s+(?:just\s+)?(?:\w+ing|at|on|out|off|"
    r"home|here|there|back|in\s+the|with|about|busy|free|ready|done|late|leaving)\b|"
    r"(?:i|we|they|user)\s+(?:just\s+)?(?:got|get|was|were|need|have\s+to|has\s+to|gotta|got\s+to|must|should|can|could|want|will|['’]ll|"
    r"really\s+need)\b|(?:it['’]s|it\s+is|its)\s+(?:raining|snowing|pouring|freezing|boiling|blowing|getting|late|early|dark|light|sunny|cold|hot|warm|\d))|"
    r"\b(?:right|just|for)\s+now$", re.IGNORECASE)


# Talk of a time before the fact ("before the shipyard i was a mechanic, the garage closed"); a
# "before" after the change only dates it ("gave the fish away before we moved").
_EARLIER = re.compile(r"\bbefore\s+(?:the|my|their|we|i|they|he|she|you)\b", re.IGNORECASE)


# A later clause that says the subject's own thing goes on ("quit the chess discord, still playing
# every night"), not something else's ("left deloitte and the pension's still with them").
_CLAUSES = re.compile(r",\s+|;\s+|\s+(?:and|so|but)\s+", re.IGNORECASE)


_STILL_AFTER = re.compile(r"^\s*(?:(?:i|we|they|user)(?:['’]m|['’]re|\s+am|\s+are|\s+is)?\s+)?(?:am\s+|are\s+|is\s+)?"
                          r"still\b(?!\s+(?:off|not|no|without|clean|sober|free|getting\s+used|adjusting|settling|unpacking|"
                          r"waiting|sorting|in\s+boxes|living\s+out\s+of|miss|gutted|sad|upset|pinching))", re.IGNORECASE)


# A clause whose subject is named, not the subject's own "i", "we" or "they": the words before a
# change that name no one of the subject's side and do not open with a word of speech ("honestly",
# "yeah", "finally").
_SOMEONE_NAMED = re.compile(
    r"^\s*(?!(?:i|i['’]?m|i['’]ve|we|we['’]re|we['’]ve|they|they['’]re|they['’]ve|user|user['’]s|me|us|them|my|our|"
    r"their|that|that['’]s|thats|it|it['’]s|its|this|what|which|there|here|so|and|but|yeah|yes|"
    r"yep|no|nah|ok|okay|well|honestly|finally|just|actually|officially|basically|recently|already|also|lol|haha|"
    r"ugh|oh|omg|then|now|today|yesterday|last|this|after|since|when|because|totally|kind|kinda|sort|pretty|"
    r"literally|seriously|anyway|turns|guess|think|update|news|big|so|well|fun)\b)[a-z][\w'’-]*(?:\s+(?!(?:i|we|they|"
    r"user)\b)[\w'’-]+){0,4}\s*$", re.IGNORECASE)


_PERSON_CHANGES = frozenset(["quit", "left", "resigned", "retired", "moved", "started", "joined", "switched",
                             "leaving", "handed", "got", "took", "broke", "split", "went"])


def _sentence_of(text: str, match: re.Match[str]) -> tuple[int, str, str]:
    """Where the sentence ``match`` is told in starts, that sentence, and its words before the match."""
    start = max(text.rfind(mark, 0, match.start()) for mark in (". ", "! ", "? ", ": ", "\u201d")) + 1
    ends_at = [i for i in (text.find(mark, match.end()) for mark in (". ", "! ", "? ")) if i >= 0]
    return start, text[start:min(ends_at) if ends_at else len(text)], text[start:match.start()]


def _own_change(text: str, match: re.Match[str]) -> bool:
    """Whether the change ``match`` found is the subject's own and really one: the sentence it is
    told in names no one else before it, hedges nothing just before it, and does not go on."""
    start, sentence, before = _sentence_of(text, match)
    said = match.group(0)
    if (said.casefold().endswith("now") and _MOMENT.search(said)) or _someone_elses(text, match, before):
        return False
    return not (_OTHERS.search(text[start:match.end()]) or _hedged(before, said)
                or _goes_on(sentence, match.start() + len(said.rstrip()) - start)
                or _EARLIER.search(before) or _ADDITION.search(sentence))


def _someone_elses(text: str, match: re.Match[str], before: str) -> bool:
    """A change told of someone else by whose thing ended ("niamh quit her job") or by a named
    subject ("Kate's quit swimming", "Gary on their shift quit yesterday")."""
    verb = match.group(0).split()[0].casefold()
    return bool((_OTHERS_AFTER.match(text[match.end():]) and verb in (
        "quit", "sold", "left", "resigned", "gave", "moved", "retired", "leaving", "selling"))
        or (_SOMEONE_NAMED.match(before) and verb in _PERSON_CHANGES))


def _hedged(before: str, said: str) -> bool:
    """A plan, a wish, a question or a negation just before the change; in "not vegan any more"
    the negation is the change itself."""
    hedge = _HEDGE.search(before[-40:])
    return hedge is not None and not (hedge.group(0).casefold() == "not"
                                      and re.fullmatch(r"any\s*more|anymore", said, re.IGNORECASE))


def _goes_on(sentence: str, said_end: int) -> bool:
    """What goes on is told before the change or in its clause ("still vegan, no longer curious"),
    or as the subject's own in a later one ("quit the chess discord, still playing every night"),
    not of something else ("left deloitte in may and the pension's still there")."""
    later = [i for i in (sentence.find(mark, said_end) for mark in (", ", " and ", " so ", " but ", "; ")) if i >= 0]
    told = sentence[:min(later) if later else len(sentence)]
    return bool(_GOES_ON.search(told) or any(_STILL_AFTER.match(clause)
                                             for clause in _CLAUSES.split(sentence[len(told):])))


@lru_cache(maxsize=1 << 15)
def change_terms(content: str) -> frozenset[str] | None:
    """The content words of a statement that tells of a change of the subject's own state in
    passing, or None (no change, someone else's change, a fact that goes on)."""
    text = content or ""
    if not any(_own_change(text, match) for match in _CHANGE.finditer(text)):
        return None
    return frozenset(t for t in _tokens(text) if t not in _VAGUE and t not in _COMMON and not t.isdigit())


_COMMON = frozenset(re.findall(r"\S+", (
    "said asked like got get go going went i i'm im me we we're our you your yeah yes no not ok okay lol haha "
    "can could want need please pls thanks thank just really think know still now then good great fine "
    "make made take took help find set remind reminder delete update change cancel new place thing things "
    "day week month year time people someone car job house home")))


@lru_cache(maxsize=1 << 15)
def ended_terms(content: str) -> frozenset[str] | None:
    """The content words of what a statement ends ("User sold the Volvo last week" -> {volvo}), or
    None when it ends nothing (a plan, a wish or a negation is no ending)."""
    match = next((m for m in _ENDING.finditer(content or "")
                  if not _HEDGE.search(content[:m.start()]) and _own_change(content, m)), None)
    if match is None:
        return None
    terms = {t for t in _tokens(match.group("obj")) if t not in _VAGUE and not t.isdigit()}
    if match.group(0).split()[0].casefold() in ("quit", "left", "resigned", "retired", "lost", "was") and not terms:
        terms = {"job"}
    return frozenset(terms)


# What a habit, a taste or a thing of one's own is about, in the words people use for it. A change
# of the subject's own on one of these ends a fact on the same one even when they share no word
# ("i'm an aisle person now" ends "window, always"; "black americano now" ends "flat white, two
# sugars"; "i work from home now" ends the 7:40 train every weekday).
_DOMAINS: tuple[re.Pattern[str], ...] = tuple(re.compile(r"\b(?:" + words + r")\b", re.IGNORECASE) for words in (
    # vehicles
    r"cars?|drive|drives|driving|motorbike|motorcycle|scooter|moped|vespa|van|truck|suv|hatchback|"
    r"volvo|mazda|ford|fiesta|subaru|fiat|toyota|prius|honda|bmw|audi|vw|volkswagen|tesla|nissan|kia|"
    r"hyundai|peugeot|renault|skoda|jeep|mini|bike|motorbikes?|cb\d+",
    # phones and computers
    r"phones?|iphone|android|pixel|samsung|galaxy|smartphone|laptop|macbook|mac|pc|windows|linux|chromebook",
    # what one eats
    r"meat|steaks?|ribeye|burgers?|beef|pork|bacon|chicken|vegan|vegetarian|veggie|plant-based|pescatarian|"
    r"carnivore|keto|gluten|dairy|lactose",
    # spicy or mild
    r"spicy|spicier|spice|hot|mild|chill?i(?:e?s)?|curry|curries|heat",
    # coffee and tea
    r"coffees?|caffeine|espresso|latte|cappuccino|americano|flat\s+white|decaf|tea|sugars?|milk|oat\s+milk",
    # alcohol
    r"wine|glass\s+of\s+\w+|a\s+glass|beer|beers|alcohol|alcoholic|booze|drinking|drinks|sober|teetotal|pints?|cocktails?|whisky|gin",
    # smoking
    r"smoke|smokes|smoked|smoking|smoker|cigs?|cigarettes?|vape|vaping|nicotine|tobacco",
    # exercise and sport done
    r"gym|workouts?|running|run|runs|jogging|jog|5k|10k|marathon|swim|swimming|pool|yoga|pilates|climbing|"
    r"cycling|lifting|weights|crossfit|football|five\s+a\s+side|five-a-side|tennis|badminton|squash|hiking",
    # teams one supports
    r"fan|supporter|united|city|fixtures?|season\s+ticket|team",
    # music
    r"bands?|albums?|music|songs?|playlist|gigs?|concerts?|spotify|listening",
    # reading
    r"books?|ebooks?|e-books?|kindle|paperbacks?|hardbacks?|paper|audiobooks?|reading|reader|novels?",
    # seats
    r"window|aisle|seats?|middle\s+seat",
    # pets
    r"cats?|kitten|dogs?|puppy|pets?|fish|aquarium|tank|tetras?|hamster|rabbit|parrot|catsit\w*",
    # games
    r"games?|gaming|gamer|playstation|ps4|ps5|xbox|nintendo|switch|steam|wow|warcraft|raid|console",
    # getting to work
    r"commute|commuting|train|tram|bus|subway|metro|bike|biking|cycle|cycles|cycling|cycled|parking|"
    r"work\s+from\s+home|wfh|remote|remotely",
    # meditation, sleep routine
    r"meditat\w*|mindfulness|sleep|bedtime|asleep",
    # music instruments
    r"piano|guitar|violin|drums|cello|keyboard|upright",
))


_JOB = (r"jobs?|work(?:s|ed|ing)?|shifts?|office|boss|manager|team|colleagues?|co-?workers?|role|position|career|"
        r"employer|company|firm|startup|agency|onboarding|hired|salary|pay|promot\w*|intern(?:ship)?|trainee|"
        r"apprentice\w*|retrain\w*|graduated|teach\w*|clients?|customers?|patients|warehouse|reception\w*|"
        r"freelanc\w*|self-employed|unemployed|between\s+jobs|stay\s+at\s+home|retired|gig|"
        r"(?:is|am|i['’]?m)\s+(?:an?\s+)?(?:\w+\s+)?(?:nurse|engineer|developer|dev|tester|accountant|barista|chef|cook|"
        r"paralegal|lawyer|solicitor|associate|pharmacist|postie|driver|teacher|designer|manager|analyst|consultant|"
        r"cleaner|electrician|sparky|plumber|builder|carpenter|mechanic|doctor|gp|vet|paramedic|carer|receptionist|"
        r"cashier|waiter|waitress|bartender|server|student|phd|researcher|scientist|writer|journalist|editor|"
        r"programmer|architect|librarian|firefighter|officer|guard|porter|technician|surveyor|tutor|lecturer)")


_HOME = (r"lives?|lived|living|live\s+in|house|houses|flat|flats|apartment|place|room|studio|cottage|caravan|"
         r"houseboat|narrowboat|boat|halls|dorm|rent|rents|renting|rental|landlord|landlady|mortgage|keys|address|"
         r"neighbou?rs?|neighbou?rhood|flatmates?|housemates?|roommates?|houseshare|flatshare|moved|moving|"
         r"resident|city|town|village|suburbs?|downtown|midtown")


_PARTNER = (r"girlfriend|boyfriend|husband|wife|partner|fianc[eé]e?|dating|date|dates|anniversary|single|"
            r"married|engaged|wedding|seeing|relationship|together|ex")


# when in the week or the day a routine happens: a new use of that time replaces the old one
_WHEN = (r"mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|(?:monday|tuesday|wednesday|thursday|"
         r"friday|saturday|sunday)\s+(?:mornings?|evenings?|nights?)|lunchtimes?|weeknights|bedtime|\d{1,2}\s*(?:am|pm)")


_SLOTS: tuple[re.Pattern[str], ...] = tuple(re.compile(r"\b(?:" + words + r")\b", re.IGNORECASE)
                                            for words in (_JOB, _HOME, _PARTNER, _WHEN))


# Who one's partner is, where one lives, whom one works for, as people say it in passing ("my
# girlfriend aisha", "dating Priya", "my flat in lisbon", "the landlord here in peckham", "my
# manager at the bank", "first week at the pharma company"): each a single value at a time, so a
# statement of one's own that names another value replaces the old one. Values are compared by their
# words, less the words any value of the kind may use ("the new place", "the office").
_VALUE = r"(?P<v>[\w&'’.-]+(?:\s+(?!(?:and|so|but|or|is|are|was|were|has|have|had|wants?|says?|said|this|that|today|tonight|for|with|on|in|at|to|of|from|by|now|again|just|because|which|who|where|when|since|until|after|before|till|though|lol|haha|it|its|it['’]s|i|we|me|my|our|finally|really|actually|honestly|is|fixed|got|keeps?|makes?|takes?|wants?)\b)[\w&'’.-]+){0,1})"


_NAME = r"(?P<v>[a-z][a-z'’-]+)"


_VALUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("partner", re.compile(r"\b(?:my|user['’]s|their|his|her)\s+(?:new\s+|second\s+|lovely\s+)?(?:girlfriend|boyfriend|husband|wife|"
                           r"partner|fianc[eé]e?|other\s+half)(?:\s+is\s+called|\s+is\s+named|\s+named|\s+called|,)?\s+" + _NAME,
                           re.IGNORECASE)),
    ("partner", re.compile(r"\b(?:a\s+(?:girlfriend|boyfriend|husband|wife|partner)\s+(?:named|called)|dating|married\s+to|"
                           r"engaged\s+to|in\s+a\s+(?:long-distance\s+)?relationship\s+with|going\s+out\s+with|seeing|"
                           r"lives?\s+with\s+(?:my|their|his|her)\s+(?:girlfriend|boyfriend|partner),?)\s+" + _NAME, re.IGNORECASE)),
    ("partner", re.compile(r"\b(?:is|being|am|i['’]m|still|now)\s+(?P<v>single)\b", re.IGNORECASE)),
    ("residence", re.compile(r"\b(?:(?:my|our|their|user['’]s)\s+(?:new\s+|own\s+|little\s+|tiny\s+|top\s+floor\s+)?(?:place|flat|house|"
                             r"home|apartment|studio|room|cottage|bungalow|terrace|balcony|garden|landlord|landlady|"
                             r"neighbou?rs?|street|road|building)(?:\s+(?:here|there|out|over|up|down))?|"
                             r"(?:lives?|living|live|based|resident)|here|back\s+home|"
                             r"(?:lives?|living|rents?|renting|owns?|bought|has|have|got)\s+(?:in\s+)?(?:a|an|the)\s+(?:[\w-]+\s+){0,3}?"
                             r"(?:flat|house|studio|room|apartment|place|cottage|terrace|bungalow|houseboat|semi))\s+"
                             r"(?:in|on)\s+(?:the\s+)?(?!(?:a|an)\s)" + _VALUE, re.IGNORECASE)),
    ("residence", re.compile(r"\b(?:(?:i['’]?m|we['’]re|i\s+am|we\s+are)\s+(?:now\s+|back\s+|living\s+|settled\s+)?in|"
                             r"(?:back|settled|based)\s+in|now\s+that\s+(?:i['’]?m|we['’]re)\s+in)\s+"
                             r"(?!(?:the|my|a|an|our|his|her|their|those|them|time|bed|town|work|love|pain|trouble|charge|"
                             r"touch|luck|shape|bits|tears|talks|hospital|class|school|uni|college|line|bed)\b)" + _VALUE,
                             re.IGNORECASE)),
    ("employer", re.compile(r"\b(?:i['’]?m|is|am|are|we['’]re|been|now|currently|still|they['’]re)\s+"
                            r"(?:a\s+)?(?:\w+\s+)?(?P<v>freelanc\w*|self-employed|unemployed|between\s+jobs|job\s+hunting|"
                            r"stay[\s-]at[\s-]home)\b", re.IGNORECASE)),
    ("employer", re.compile(r"\b(?:works?|working|job|shifts?|manager|boss|colleagues?|co-?workers?|team|on-call|contract|"
                            r"internship|placement|role|position|class|pupils|patients|clients|desk|week|day|"
                            r"(?:nurse|engineer|developer|dev|tester|accountant|barista|chef|cook|paralegal|solicitor|"
                            r"associate|pharmacist|teacher|designer|analyst|consultant|cleaner|electrician|mechanic|"
                            r"doctor|receptionist|cashier|waiter|waitress|bartender|assistant|manager|officer|"
                            r"technician|tutor|lecturer|researcher|scientist|writer|editor|programmer|architect|"
                            r"librarian|driver|porter|carer|trainee|intern))\s+(?:at|for)\s+(?:the\s+|an?\s+)?" + _VALUE,
                            re.IGNORECASE)),
)


# Words a value of any one of these kinds may use, which tell no value from another.
_ANY_VALUE = frozenset(re.findall(r"\S+", (
    "new old own place flat house home apartment studio room office work job company firm shop store "
    "site the a an little tiny top floor my our their same local usual main big small one two three "
    "days week weekend weekends morning mornings evening evenings night nights moment minute")))


_NOT_A_NAME = frozenset(re.findall(r"\S+", (
    "is was has had and thinks wants says said just keeps kept made makes got gets took takes came comes went goes "
    "left loves hates asked asks told tells called named who whose can could will would should might did does do "
    "finally really always never still also too now then so but or the a an of to in on at for with from "
    "someone somebody anyone nobody again there here it me them him her us you your")))


def _value_words(kind: str, match: re.Match[str]) -> frozenset[str]:
    """The words of the value a :data:`_VALUES` match names, less those any value may use (and, for
    a partner, the words that are no name)."""
    words = frozenset(w for w in _tokens(match.group("v")) if w not in _ANY_VALUE)
    return words - _NOT_A_NAME if kind == "partner" else words


_SELF = re.compile(r"^(?:(?:i['’]?m|i\s+am|we['’]re|we\s+are)\s+(?:(?:a|an|now|still|totally|fully|strictly|"
                   r"basically|mostly|such\s+a)\s+)?(?P<what>[\w-]+)|single\b|engaged\s+to\b|married\s+to\b|"
                   r"seeing\s+(?:someone|a\s+\w+)\s+(?:called|named)\b)", re.IGNORECASE)


def states_a_value(sentence: str) -> bool:
    """Whether a sentence of the subject's own, however short, states a part of their life: a value
    of one (:func:`values`), or "i'm ..." of a habit, taste or thing (:data:`_DOMAINS`) or of a
    job, home or partner (:data:`_SLOTS`) — "i'm pescatarian", "im in dublin", "engaged to tom!"."""
    text = (sentence or "").strip()
    if any(_own_value(text, match) for kind, pattern in _VALUES for match in pattern.finditer(text)
           if _value_words(kind, match)):
        return True
    self_said = _SELF.match(re.sub(r"^(?:(?:oh|and|but|so|ok|okay|well|yes|yeah|yep|lol|haha|ugh)\b[\s,!.]*)+", "", text,
                                   flags=re.IGNORECASE))
    if self_said is None:
        return False
    what = self_said.group("what")
    return what is None or any(slot.fullmatch(what) for slot in _SLOTS + _DOMAINS)


def _own_value(text: str, match: re.Match[str]) -> bool:
    """:func:`_own_change` for a value: the words that name it ("my girlfriend aisha") are the
    subject's own, so only what comes before them may name someone else."""
    _, sentence, before = _sentence_of(text, match)
    return not (_OTHERS.search(before) or _GOES_ON.search(sentence) or _HEDGE.search(before[-40:])
                or _EARLIER.search(before) or _ALSO.search(sentence))


# An addition said of a value ("also seeing sam", "a flat in leeds too"); "second" or "another" may
# be the value's own word ("my second wife denise").
_ALSO = re.compile(r"\b(?:also|too(?=\s*(?:[.,!?;]|$))|as\s+well|on\s+top\s+of)\b", re.IGNORECASE)

