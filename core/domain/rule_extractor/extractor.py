"""The rule-based extractor: walks the owner's segments (and named other speakers'), turns clauses
into drafts and workflow candidates, and keeps only drafts whose quotes bind."""

from __future__ import annotations

import re
from datetime import date

from ..extraction import (
    Candidate,
    ExtractionResult,
    ExtractionSource,
    MemoryKind,
    Segment,
    WorkflowCandidate,
    source_segments,
)
from ..routing import change_terms, ended_terms
from ..sensitivity import contains_secret, label_sensitivity
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
_PET = re.compile(r"\b(?:my|our)\s+(?:(?:old|little|new|big)\s+)?(?P<pet>dog|cat|puppy|kitten|rabbit|bunny|"
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


def _pets(segment: Segment) -> list[_Draft]:
    drafts: list[_Draft] = []
    for match in _PET.finditer(segment.text):
        name = match.group("name")
        if name.casefold() in _NOT_A_PET_NAME or name.casefold() in _NOT_A_NAME:
            continue
        pet = " ".join(match.group("pet").lower().split())
        clause = _Clause(segment, match.start(), match.end(), (match.start(), match.end()))
        drafts.append(_Draft(f"User has a {pet} named {name[:1].upper() + name[1:]}", "relationship", "user", None,
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
    extractor_version = "5"  # 2: habits, experiences, short answers, pronoun fixes;
    # 3: named other speakers, a fallback for first-person statements no specific rule knows;
    # 4: the owner's turns no rule knows (answers, lists, facts about others), dates resolved;
    # 5: a named other speaker's turns no rule knows, kept in their words

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
                    drafts.extend(theirs or turn_memories(segment, previous, name))
                previous = segment
                continue
            before = len(drafts)
            drafts.extend(_pets(segment))
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
            memories=self._finalise(segments, drafts, source.session_date),
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
        for draft in drafts:
            quotes: list[str] = []
            for clause, start, end in draft.quotes:
                quote = _unique_quote(segments, clause, start, end)
                if quote is None:
                    break
                quotes.append(quote)
            else:
                # Dates the speaker gave relative to the day ("last Tuesday") are resolved against it.
                content = draft.content + annotation(" ".join(quotes), day) if draft.content else ""
                key = (content.casefold(), draft.subject_label)
                if key in seen or not content:
                    continue
                if contains_secret(content) or any(contains_secret(q) for q in quotes):
                    continue
                labels = label_sensitivity(" ".join((content, *quotes)))
                seen.add(key)
                out.append(Candidate(
                    content=content, kind=draft.kind,
                    category=draft.category or _category(draft.kind, content, labels),
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
