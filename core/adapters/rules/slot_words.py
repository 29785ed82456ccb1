"""The rules reading of a slot (core.domain.slots) from the owner's own words: the rule extractor
uses it, and so do explicit memories and content edits (the owner's typed words).

Only a plain first-person statement is read ("I live in ...", "we moved to ...", "I sold my ...");
anything hedged, negated, asked, planned, wished, remembered or told of a trip is not, and neither is
a fact about anyone else: a slot this cannot read is simply absent, and an absent slot ends nothing.
The words are general English, never sentences of a data set.
"""

from __future__ import annotations

import re
from dataclasses import replace

from core.domain.extraction import Candidate
from core.domain.slots import Slot

_ME = r"(?:i|we|i['’]ve|we['’]ve|i['’]m|we['’]re|i\s+have|we\s+have|i\s+am|we\s+are)"
_SOON = r"(?:\s+(?:just|finally|recently|officially|now|actually|also|then|already|since|been))*"
_NAME = r"(?P<v>(?:[A-Z][\w&'’.-]*)(?:\s+(?:[A-Z][\w&'’.-]*|of|de|la|&))*)"
_TRAILING = re.compile(r"(?:\s+(?:of|de|la|&))+$")
_WORDS = r"(?P<v>[a-z][a-z'’-]*(?:\s+(?!(?:at|for|in|with|and|but|so|now|since|because|who|which|on)\b)[a-z][a-z'’-]*){0,3})"
_VEHICLES = (r"toyota|honda|ford|volvo|tesla|bmw|audi|subaru|mazda|volkswagen|vw|kia|hyundai|nissan|jeep|chevy|"
             r"chevrolet|prius|civic|corolla|golf|fiesta|mini|fiat|skoda|renault|peugeot|jaguar|lexus|porsche|"
             r"rivian|polestar|mercedes|saab|dodge|ram|gmc|buick|cadillac|citroen|seat|suzuki|mitsubishi|leaf|"
             r"motorbike|motorcycle|scooter|truck|van|pickup|camper|minivan|suv|hatchback|sedan|estate")
_VEHICLE = r"(?P<v>(?:[\w-]+\s+){0,2}?(?:" + _VEHICLES + r")\d*(?-i:\s+[A-Z0-9][\w-]*)?)"
_DIETS = r"(?P<v>vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten[\s-]free|plant[\s-]based|carnivore)"
_PARTNERS = r"(?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse)"
_PETS = r"(?:dog|cat|puppy|kitten|rabbit|bunny|hamster|parrot|budgie|tortoise|turtle|horse|pony|guinea\s+pig|ferret|lizard|snake)"
_SPORTS = (r"(?P<v>tennis|football|soccer|basketball|baseball|volleyball|rugby|cricket|golf|squash|badminton|hockey|"
           r"netball|swimming|running|cycling|climbing|bouldering|rowing|boxing|judo|karate|yoga|pilates|crossfit|"
           r"skiing|snowboarding|surfing|skateboarding|triathlons?|marathons?|chess)")

# (attribute, ended, pattern): the first match in the quote wins.
_READINGS: tuple[tuple[str, bool, re.Pattern[str]], ...] = tuple(
    (attribute, ended, re.compile(pattern, re.IGNORECASE if attribute not in ("residence", "employer", "school")
                                  else 0))
    for attribute, ended, pattern in (
        ("residence", True, r"\b(?i:" + _ME + _SOON + r"\s+moved\s+(?:out\s+of|away\s+from))\s+" + _NAME),
        ("residence", False, r"\b(?i:" + _ME + _SOON + r"\s+(?:live|living|lived|moved|relocated|settled|based)"
                             r"(?:\s+with\s+(?:my|our)\s+[a-z]+)?(?:\s+(?:here|over|down|up|back|out))?\s+(?:in|to))"
                             r"\s+(?:the\s+)?" + _NAME),
        ("school", True, r"\b(?i:" + _ME + _SOON + r"\s+(?:graduated|dropped\s+out)\s+(?:from|of))\s+" + _NAME),
        ("school", False, r"\b(?i:" + _ME + _SOON + r"\s+(?:study|studying|enrolled|transferred|(?:a|an)\s+"
                          r"(?:(?:grad|graduate|phd|master['’]?s|undergrad|first[\s-]year|second[\s-]year|final[\s-]year)"
                          r"\s+)?(?:student|freshman|sophomore|junior|senior|undergrad)|doing\s+(?:a|an|my)\s+"
                          r"(?:master['’]?s|phd|degree|doctorate|ba|bsc|ma|msc|mba)(?:\s+in\s+[a-z ]{2,30}?)?)\s+"
                          r"(?:at|in|to))\s+(?:the\s+)?" + _NAME),
        ("employer", True, r"\b(?i:(?:" + _ME + _SOON + r"\s+(?:quit|left|resigned\s+from|retired\s+from|"
                           r"(?:was|got)\s+(?:laid\s+off|fired|let\s+go)\s+(?:from|by))|my\s+last\s+day\s+at))\s+"
                           + _NAME),
        ("employer", False, r"\b(?i:" + _ME + _SOON + r"\s+(?:work|working|worked|started|joined|employed|been\s+at|"
                            r"(?:got|took|accepted)\s+(?:a|the|an)\s+(?:new\s+)?(?:job|position|role|offer))"
                            r"(?:\s+(?:full[\s-]time|now))?\s+(?:at|for|with|from)?\s*)(?:the\s+)?" + _NAME),
        ("job_title", False, r"\b" + _ME + _SOON + r"\s+(?:work(?:ing)?\s+as|practi[cs]ing\s+as|promoted\s+to|became|now)\s+"
                             r"(?:a|an|the)\s+(?:new\s+)?" + _WORDS),
        ("partner", True, r"\b(?:" + _ME + _SOON + r"\s+(?:divorced|broke\s+up\s+with|split\s+(?:up\s+)?with|"
                          r"separated\s+from)\s+(?P<v>[A-Z][\w'’-]+)|(?P<w>[A-Z][\w'’-]+)\s+and\s+i\s+(?:got\s+)?"
                          r"(?:divorced|broke\s+up|split(?:\s+up)?|separated))"),
        ("partner", False, r"\b(?:" + _ME + _SOON + r"\s+(?:married\s+to|married|engaged\s+to|dating|seeing)\s+"
                           r"(?P<v>[A-Z][\w'’-]+)|my\s+(?:new\s+)?" + _PARTNERS + r",?\s+(?P<w>[A-Z][\w'’-]+))"),
        ("vehicle", True, r"\b" + _ME + _SOON + r"\s+(?:sold|scrapped|traded\s+in|gave\s+away|got\s+rid\s+of|"
                          r"totall?ed|wrote\s+off)\s+(?:my|our|the)\s+" + _VEHICLE),
        ("vehicle", False, r"\b(?:" + _ME + _SOON + r"\s+(?:drive|driving|bought|got|own|picked\s+up)\s+(?:a|an|my|our)\s+"
                           r"(?:new\s+|used\s+|second[\s-]hand\s+)?" + _VEHICLE + r"|my\s+(?:car|ride)\s+is\s+(?:a|an)\s+"
                           r"(?P<w>[\w\s-]{2,30}))"),
        ("diet", True, r"\b" + _ME + _SOON + r"\s+(?:(?:not|no\s+longer)\s+(?:a\s+)?" + _DIETS + r"|(?:stopped\s+being|"
                       r"gave\s+up(?:\s+on)?(?:\s+being)?|quit)\s+(?:a\s+)?(?P<w>vegetarian|vegan|pescatarian|keto|paleo))"),
        ("diet", False, r"\b" + _ME + _SOON + r"\s+(?:a\s+|went\s+|gone\s+|eating\s+|been\s+|doing\s+)?(?:strict\s+|strictly\s+|fully\s+)?"
                        + _DIETS + r"\b"),
        ("pet", True, r"\b(?:(?:my|our)\s+(?:" + _PETS + r")\s+(?P<v>[A-Z][\w'’-]+)\s+(?:died|passed\s+away)|"
                      + _ME + _SOON + r"\s+(?:rehomed|lost|had\s+to\s+put\s+down)\s+(?:my|our)\s+(?:" + _PETS
                      + r")\s+(?P<w>[A-Z][\w'’-]+))"),
        ("pet", False, r"\b(?:my|our)\s+(?:new\s+)?(?:" + _PETS + r"),?\s+(?P<v>[A-Z][\w'’-]+)"),
        ("sport", True, r"\b" + _ME + _SOON + r"\s+(?:stopped|quit|gave\s+up)\s+(?:playing\s+|doing\s+)?" + _SPORTS),
        ("sport", False, r"\b" + _ME + _SOON + r"\s+(?:play|playing|do|doing|took\s+up|started)\s+" + _SPORTS),
    )
)
# Words before the statement that make it something else than a plain fact.
_HEDGE = re.compile(
    r"\b(?:if|when|whether|would|could|might|may|should|will|gonna|going\s+to|want\s+to|wanna|wish|hope|hoping|"
    r"plan|plans|planning|thinking|considering|maybe|someday|one\s+day|never|not|no|don['’]?t|didn['’]?t|"
    r"haven['’]?t|hasn['’]?t|can['’]?t|won['’]?t|used\s+to|back\s+when|before|once|almost|nearly|"
    r"tried|trying|dream|imagine|pretend|rumou?r|heard|says|said|told|asked|thinks?|thought|"
    r"he|she|they|my\s+(?:\w+\s+)?(?:sister|brother|mum|mom|dad|friend|colleague|boss|manager|son|daughter))\b",
    re.IGNORECASE)
# Words after it that make it a stay, a plan or a part of something else.
_AFTER = re.compile(r"^[^.!?]{0,40}?\b(?:for\s+(?:the|a|two|three|a\s+few|the\s+next)\s+(?:week|weekend|days?|night|"
                    r"month|summer|holidays?|conference|trip)|on\s+(?:vacation|holiday|a\s+trip|business)|"
                    r"next\s+(?:week|month|year)|too|as\s+well|on\s+the\s+side|part[\s-]time|on\s+weekends|"
                    r"someday|one\s+day|eventually)\b", re.IGNORECASE)


def read_slot(text: str) -> Slot | None:
    """The slot a plain first-person statement in ``text`` sets, or None."""
    if not text or text.rstrip().endswith("?"):
        return None
    for attribute, ended, pattern in _READINGS:
        for match in pattern.finditer(text):
            sentence_start = max(text.rfind(mark, 0, match.start()) for mark in (".", "!", "?", ";")) + 1
            before = text[sentence_start:match.start()]
            value = match.groupdict().get("v") or match.groupdict().get("w")
            if not value or _HEDGE.search(before[-60:]) or _AFTER.match(text[match.end():]):
                continue
            value = _TRAILING.sub("", value.strip(" ,.'’-"))
            if value:
                return Slot(attribute=attribute, value=value, ended=ended)
    return None


def with_slots(memories: tuple[Candidate, ...]) -> tuple[Candidate, ...]:
    """The owner's own candidates, each with the slot its quotes state (when one does)."""
    out = []
    for memory in memories:
        slot = None
        if memory.subject == "user" and memory.slot is None:
            slot = next((s for s in map(read_slot, memory.quotes) if s is not None), None)
        out.append(replace(memory, slot=slot) if slot is not None else memory)
    return tuple(out)
