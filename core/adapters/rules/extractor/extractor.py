"""The rule-based extractor: walks the owner's segments (and named other speakers'), turns clauses
into drafts and workflow candidates, and keeps only drafts whose quotes bind."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from core.adapters.rules.sensitivity import contains_secret, label_sensitivity
from core.adapters.rules.slot_words import with_slots
from core.domain.extraction import (
    Candidate,
    ExtractionResult,
    ExtractionSource,
    MemoryKind,
    Segment,
    Subject,
    WorkflowCandidate,
    source_segments,
)

from . import worth
from .changes import change_terms, ended_terms
from .clauses import _I, _REPORTED, _Clause, _clauses, _Draft, _sentence_around, _unique_quote
from .dates import annotation
from .disclosure import (
    _ADDRESSES_OWNER,
    _EMPHATIC_MYSELF,
    _echo,
    _generic_disclosure,
    _self_disclosure,
    _speaker_name,
)
from .patterns import (
    _ACTION,
    _AIM,
    _ANSWER_BY_NAME,
    _CHATTER,
    _CUTTING_DOWN,
    _DUE,
    _HABIT_MARK,
    _LEAD_TIME,
    _NAME_IS_MY,
    _NAME_MENTION,
    _NOT_A_NAME,
    _NOT_THIRD_PARTY_VERB,
    _PERSON,
    _PLACE_BEFORE,
    _PREFERENCE,
    _PRONOUN_PERSON,
    _RELATION_STATEMENT,
    _RELATIONS,
    _THIRD_PARTY_HABIT,
    _TRAINING,
    _YOUR_RELATION,
    _category,
)
from .phrasing import _about_person, _finish
from .turns import turn_memories

# "my dog biscuit", "our cat Pickle": a pet named in passing, often inside a request ("remind me to
# buy food for my dog biscuit") that no other rule keeps as a memory.
_PET = re.compile(r"\b(?:my|our)\s+(?:(?:old|little|new|big|first|second|third|other|youngest|oldest)\s+)?(?P<pet>dog|cat|puppy|kitten|rabbit|bunny|"
                  r"horse|pony|parrot|budgie|hamster|guinea\s+pig|tortoise|turtle|ferret|snake|lizard)\s*,?\s+"
                  r"(?P<name>[A-Za-z][a-z]{2,})\b", _I)
_NOT_A_PET_NAME = frozenset(
    ["and", "the", "who", "which", "that", "is", "was", "has", "had", "does", "did", "needs", "keeps", "won't", "can't", "isn't", "wasn't", "will", "would", "food", "bowl", "bed", "toy", "toys", "lead", "leash", "collar", "crate", "vet", "walker", "sitter", "sitting", "walk", "walks", "walking", "treats", "insurance", "hair", "got", "gets", "just", "really", "still", "loves", "likes", "hates", "ate", "eats", "threw", "throws", "keeps", "kept", "ran", "runs", "went", "goes"])


def _untold_change(segment: Segment, drafts: list[_Draft]) -> bool:
    """Whether the owner's turn tells of a change of their own state ("we broke up, like 3 weeks
    ago") that none of its memories tells: the turn is then also kept whole, since consolidation
    needs the sentence the change is told in to find the fact it ends."""
    return change_terms(segment.text) is not None and not any(
        change_terms(d.content) is not None or ended_terms(d.content) is not None for d in drafts if d.subject == "user")


def _pets(segment: Segment, who: str | None = None) -> list[_Draft]:
    """"my dog biscuit" -> "User has a dog named Biscuit" ("Jonas has ..." when ``who``, a named
    other speaker, said it: their pet, labelled with their name)."""
    drafts: list[_Draft] = []
    for match in _PET.finditer(segment.text):
        name = match.group("name")
        if name.casefold() in _NOT_A_PET_NAME or name.casefold() in _NOT_A_NAME:
            continue
        pet = " ".join(match.group("pet").lower().split())
        clause = _Clause(segment, match.start(), match.end(), (match.start(), match.end()))
        drafts.append(_Draft(f"{who or 'User'} has a {pet} named {name[:1].upper() + name[1:]}", "relationship",
                             "user" if who is None else "third_party", who, ((clause, match.start(), match.end()),)))
    return drafts


# "my new neighbor Anna", "my husband, Tom": a named person of the speaker's life, told in passing
# anywhere in a sentence (case-sensitive: the name is capitalised).
_NAMED_RELATION = re.compile(
    r"\b(?i:my|our)\s+(?:(?i:new|old|best|little|big|older|younger|elder|baby|twin)\s+)?(?P<rel>(?i:" + _RELATIONS +
    r"))(?:\s*,)?\s+(?P<name>[A-Z][a-z]{2,})\b(?!['’]s\s)")
# "my husband", "my two dogs", "my kids": someone or a pet the speaker has, named or not.
_HAS = re.compile(
    r"\b(?<!\bex[- ])(?i:my|our)\s+(?:(?P<count>two|three|four|five|six)\s+)?(?:(?i:new|little|baby|pet)\s+)?"
    r"(?P<what>(?i:husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|son|daughter|sons|daughters|kids|children|"
    r"dogs?|cats?|puppy|puppies|kittens?|snakes?|rabbits?|horses?|parrots?|hamsters?|turtles?|tortoises?|"
    r"guinea\s+pigs?|lizards?|ferrets?))\b(?!\s*(?:-|and)\s*(?:in-law|to-be))")
_PLURAL = {"kids": "kids", "children": "children", "sons": "sons", "daughters": "daughters", "puppies": "puppies"}


def _kin(segment: Segment, who: str | None) -> list[_Draft]:
    """Who and what the speaker has, told anywhere in a turn: "my new neighbor Anna" -> "Anna is
    the user's neighbor" ("Jonas has a neighbor named Anna" when ``who``, a named other speaker, said it),
    "my two dogs" -> "User has two dogs"; a relationship, quoted from the words that tell it."""
    drafts: list[_Draft] = []
    owner: Subject = "user" if who is None else "third_party"
    for match in _NAMED_RELATION.finditer(segment.text):
        name, rel = match.group("name"), " ".join(match.group("rel").lower().split())
        if name.lower() in _NOT_A_NAME or (who is not None and name == who):
            continue
        clause = _Clause(segment, match.start(), match.end(), (match.start(), match.end()))
        spans = ((clause, match.start(), match.end()),)
        # Another speaker's words are about that speaker: their relation, labelled with their name.
        drafts.append(_Draft(f"{name} is the user's {rel}", "relationship", "third_party", name, spans) if who is None
                      else _Draft(f"{who} has {'an' if rel[0] in 'aeiou' else 'a'} {rel} named {name}", "relationship",
                                  "third_party", who, spans))
    for match in _HAS.finditer(segment.text):
        what = " ".join(match.group("what").lower().split())
        count = match.group("count")
        if count:
            thing = f"{count.lower()} {what if what.endswith('s') or what in _PLURAL else what + 's'}"
        elif what.endswith("s") and what not in ("fiancés",) or what in _PLURAL:
            thing = what
        else:
            thing = ("an " if what[0] in "aeiou" else "a ") + what
        clause = _Clause(segment, match.start(), match.end(), (match.start(), match.end()))
        drafts.append(_Draft(f"{who or 'User'} has {thing}", "relationship", owner, who,
                             ((clause, match.start(), match.end()),)))
    return drafts


def _name_mentioned(body: str) -> str | None:
    """The person ``body`` names, whom a later "he"/"she" may refer to. A capitalised word after
    "to/in/from/visit ..." is a place ("to Iceland"), not a person."""
    mention = next((m for m in _NAME_MENTION.finditer(body)
                    if not _PLACE_BEFORE.search(body, 0, m.start())), None)
    if mention and mention.group("name").split()[0].lower() not in _NOT_A_NAME:
        return mention.group("name")
    return None


class RuleExtractor:
    """Deterministic extraction of durable first-person statements (see the module docstring)."""

    extractor_id = "rules"
    extractor_version = "6"  # 2: habits, experiences, short answers, pronoun fixes;
    # 3: named other speakers, a fallback for first-person statements no specific rule knows;
    # 4: the owner's turns no rule knows (answers, lists, facts about others), dates resolved;
    # 5: a named other speaker's turns no rule knows, kept in their words;
    # 6: only what reads alone and lasts (no dialogue dumps, moods, dangling pointers; one-day
    # events are plans), who and what a speaker has, dates in the speaker's tense

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
                    theirs = self._speaker_memories(segment, name)
                    drafts.extend(_pets(segment, name))
                    drafts.extend(_kin(segment, name))
                    drafts.extend(theirs or turn_memories(segment, previous, name))
                previous = segment
                continue
            before = len(drafts)
            drafts.extend(_pets(segment))
            drafts.extend(_kin(segment, None))
            echoed = _echo(segment, previous)
            if echoed is not None:
                drafts.append(echoed)
            for clause in _clauses(segment):
                body = clause.text
                if contains_secret(body):
                    continue  # a clause that discloses a credential is never a memory
                name_here = _name_mentioned(body)
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
            if (len(drafts) == before and not any(c.segment is segment for _, c in actions + goals)) \
                    or _untold_change(segment, drafts[before:]):
                drafts.extend(turn_memories(segment, previous))
            previous = segment
        return ExtractionResult(
            memories=with_slots(self._finalise(segments, drafts, source.session_date)),
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
        whole = ((clause, clause.start, clause.end),)
        body, suffix = _framing(clause.text)
        # A named person answering "your brother ...?": a relationship of the owner.
        answered = _answer_draft(clause, body, previous)
        drafts: list[_Draft] = [answered] if answered is not None else []

        if _CHATTER.search(body) and not _PREFERENCE.match(body):
            return drafts
        person = _person_draft(body, suffix, whole)
        if person is not None:
            return [*drafts, person]
        pronoun = _PRONOUN_PERSON.match(body)
        if pronoun:
            if last_name:
                # Quote from the clause that named the person when it is in the same sentence.
                named_at = clause.segment.text.rfind(last_name, clause.sentence[0], clause.start)
                span_start = named_at if named_at >= 0 else clause.start
                drafts.append(_Draft(_about_person(last_name, pronoun.group("rest")) + suffix, "fact",
                                     "third_party", last_name, ((clause, span_start, clause.end),)))
            return drafts
        habit, stop = _habit_draft(clause, body, last_name, suffix)
        if stop:
            return drafts + ([habit] if habit is not None else [])
        related = _relation_drafts(body, suffix, whole)
        if related is not None:
            return drafts + related

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
    def _finalise(segments: tuple[Segment, ...], drafts: list[_Draft],
                  day: date | None = None) -> tuple[Candidate, ...]:
        out: list[Candidate] = []
        seen: set[tuple[str, str | None]] = set()
        names = _known_names(segments)
        for given in drafts:
            judged = _worth(given, names)
            if judged is None:
                continue
            kind, draft = judged
            quotes: list[str] = []
            for clause, start, end in draft.quotes:
                quote = _unique_quote(segments, clause, start, end)
                if quote is None:
                    break
                quotes.append(quote)
            else:
                # Dates the speaker gave relative to the day ("last Tuesday") are resolved against it,
                # in the tense the speaker used.
                spoken = " ".join(clause.segment.text[start:end] for clause, start, end in draft.quotes)
                content = draft.content + annotation(spoken, day) if draft.content else ""
                key = (content.casefold(), draft.subject_label)
                if key in seen or not content:
                    continue
                if contains_secret(content) or any(contains_secret(q) for q in quotes):
                    continue
                if any(_cut_from(content, other.content) for other in out if other.subject_label == draft.subject_label):
                    continue  # the same statement, cut shorter already
                labels = label_sensitivity(" ".join((content, *quotes)))
                seen.add(key)
                out.append(Candidate(
                    content=content, kind=kind,
                    category=draft.category or _category(kind, content, labels),
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


# --------------------------------------------------------------------------- worth keeping
_NAME_IN_TEXT = re.compile(r"[a-z,;:]\s+(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
                           r"|\b(?i:my|our)\s+(?i:" + _RELATIONS + r")\s+(?P<named>[A-Z][a-z]+)")


def _cut_from(longer: str, shorter: str) -> bool:
    """Whether ``longer`` is ``shorter`` with more words after it (dates aside)."""
    a, b = longer.split(" (")[0], shorter.split(" (")[0]
    return len(a) > len(b) and a.startswith(b + " ") or a.startswith(b + ",") or a.startswith(b + " -")


# A capitalised word that a "he"/"she" of the same turn refers back to is a person (or a pet).
_REFERRED = re.compile(r"(?:^|[.!?]\s+)(?P<name>[A-Z][a-z]{2,})\b(?=[^.!?]*(?:[.!?]\s+[^.!?]*)?\b(?:[Hh]e|[Ss]he|"
                       r"him|his|her)\b)")


def _known_names(segments: tuple[Segment, ...]) -> frozenset[str]:
    """Who the conversation names as a person: its named speakers, a capitalised name said inside a
    sentence (after a lower-case word or a comma) and a first word that a "he" or "she" of the same
    turn refers back to -- a sentence's first word is capitalised whatever it is ("Nature has a way
    ..." names nobody)."""
    names = {label for s in segments if (label := _speaker_name(s.speaker)) is not None}
    for segment in segments:
        for match in _REFERRED.finditer(segment.text):  # "Marta swims ... before her shift"
            if match.group("name").lower() not in _NOT_A_NAME:
                names.add(match.group("name"))
        for match in _NAME_IN_TEXT.finditer(segment.text):
            if match.group("name") and _PLACE_BEFORE.search(segment.text, 0, match.start("name")):
                continue  # "called Apex", "in Paris": a thing or a place
            names.add(match.group("name") or match.group("named"))
    return frozenset(names)


def _worth(draft: _Draft, names: frozenset[str]) -> tuple[MemoryKind, _Draft] | None:
    """The kind a draft is kept as and the draft itself (cut before a trailing pointer: "I finished
    the project, but it's done" keeps "... finished the project"), or None when it is not worth
    keeping (:mod:`.worth`)."""
    if draft.subject == "third_party" and draft.subject_label is not None \
            and draft.subject_label.split()[0] not in {n.split()[0] for n in names}:
        return None  # a capitalised first word taken for a name
    if draft.kind == "relationship" and draft.subject_label is not None:
        return "relationship", draft  # "Tom is the user's brother": the name is the referent
    spoken = " ".join(clause.segment.text[start:end] for clause, start, end in draft.quotes)
    if len(draft.quotes) == 1:
        cut = worth.cut_before_pointer(spoken, draft.content)
        if cut is not None:
            clause, start, _ = draft.quotes[0]
            spoken, content = cut
            draft = replace(draft, content=content, quotes=((clause, start, start + len(spoken)),))
    if not worth.speaks_alone(spoken, draft.content, draft.subject == "user") or worth.mood(draft.content):
        return None
    if draft.kind == "plan" or worth.intent(draft.content) or worth.one_day(spoken, draft.content):
        return "plan", draft
    return draft.kind, draft


# --------------------------------------------------------------------------- the steps of _memories
def _framing(body: str) -> tuple[str, str]:
    """The clause body without its reporting frame ("my doctor says ...") or its leading time
    adverb, and the suffix they become (", according to their doctor", " lately")."""
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
    return body, when + suffix


def _answer_draft(clause: _Clause, body: str, previous: Segment | None) -> _Draft | None:
    """A named person answering the previous turn's "your brother ...?": the owner's relationship."""
    answer = _ANSWER_BY_NAME.match(body)
    if not answer or answer.group("name").split()[0].lower() in _NOT_A_NAME or previous is None:
        return None
    relation = _YOUR_RELATION.search(previous.text)
    if not relation:
        return None
    name = answer.group("name")
    prev_clause = _sentence_around(previous, relation.start())
    return _Draft(f"{name} is the user's {relation.group('rel').lower()}", "relationship", "third_party", name,
                  (prev_clause, (clause, clause.start, clause.start + answer.end())))


def _person_draft(body: str, suffix: str, whole: tuple[tuple[_Clause, int, int], ...]) -> _Draft | None:
    """A clause about a named person ("Anna works at ...")."""
    person = _PERSON.match(body)
    if not person or person.group("name").split()[0].lower() in _NOT_A_NAME:
        return None
    name = person.group("name")
    kind: MemoryKind = "relationship" if re.search(r"\bmy\s+(?:" + _RELATIONS + r")\b", body, _I) else "fact"
    return _Draft(_about_person(name, person.group("rest")) + suffix, kind, "third_party", name, whole)


def _habit_draft(clause: _Clause, body: str, last_name: str | None, suffix: str) -> tuple[_Draft | None, bool]:
    """(a third party's habit, whether the clause ends here): "he"/"she" only when the person was
    named earlier in this same turn (else nothing, and the clause ends); a name that is no name
    lets the clause go on."""
    habit = _THIRD_PARTY_HABIT.match(body) if _HABIT_MARK.search(body) else None
    if not habit or habit.group("verb").lower() in _NOT_THIRD_PARTY_VERB:
        return None, False
    name = habit.group("name")
    span_start = clause.start
    if name is None:
        named_at = clause.segment.text.rfind(last_name, 0, clause.start) if last_name else -1
        if named_at < 0 or last_name is None:
            return None, True
        # The quote runs from the name to this clause, so it shows who "he"/"she" is.
        name, span_start = last_name, named_at
    elif name.split()[0].lower() in _NOT_A_NAME:
        return None, False
    return _Draft(_about_person(name, body[habit.end("who"):]) + suffix, "fact", "third_party", name,
                  ((clause, span_start, clause.end),), "habits"), True


def _relation_drafts(body: str, suffix: str, whole: tuple[tuple[_Clause, int, int], ...]) -> list[_Draft] | None:
    """"My cousin Meera ..." / "Meera is my cousin": the relationship, and what the sentence says
    about the person too; None when the clause states no relation."""
    relation = _RELATION_STATEMENT.match(body) or _NAME_IS_MY.match(body)
    if not relation or relation.group("name").split()[0].lower() in _NOT_A_NAME:
        return None
    name = relation.group("name")
    drafts = [_Draft(f"{name} is the user's {relation.group('rel').lower()}", "relationship", "third_party",
                     name, whole)]
    rest = body[relation.end():]
    if relation.re is _RELATION_STATEMENT and len(rest.split()) >= 2 and not _CHATTER.search(rest):
        drafts.append(_Draft(_about_person(name, rest) + suffix, "fact", "third_party", name, whole))
    return drafts
