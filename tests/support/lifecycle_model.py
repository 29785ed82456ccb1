"""A pure reference model of what a user's surfaces must show after a sequence of actions.

Used by the model-based lifecycle test (``tests/e2e/test_lifecycle_model.py``). It knows nothing
of ``core``; its rules come from ``docs/data-model.md`` (layers, states, deletes) and issue 20:

* A fact a user said in a conversation that still exists, and did not delete, is listed; once a
  consolidation pass has seen every statement of it, exactly once (default reads collapse a
  logical memory to one row by canonical lineage, and a pass merges the statements of one fact
  into one lineage, within the pass as against Long-term; before that, each conversation's
  Short-term extraction may be its own row). Short-term, review-pending and Long-term facts are all
  default-visible.
* A user's delete holds: a deleted fact does not come back when its source is re-extracted with
  the same words (reprocess, redelivery, an edit of another line). Only a new statement (a new
  conversation) makes a new memory.
* A review ``reject`` hides the fact (it stays hidden while its source says it); ``correct``
  replaces its words with the correction; ``accept`` keeps it. A correction is the user's own
  statement (its own evidence): the corrected memory outlives its conversation (a delete, or an edit
  that drops the line), while the words it replaced go with the conversation — a settled review
  entry keeps the decision, not the text.
* A fact waiting in review stays waiting, under the same question, whatever else revises it (a
  visibility or review-flag edit, its conversation captured again): every pending item reaches one
  terminal route, so its review stays listed and resolvable (issue 27).
* Deleting a conversation, a memory, all memories or the account removes the words everywhere: the
  deleted texts must occur in no document of the user, no index entry, no graph node/edge and no
  export line, unless a live source still states them.
* A device-scoped read (``device_scope=current|explicit``) lists exactly the facts the default
  read lists that a live source captured on one of the scope's devices (the spec's device
  identity: a universal retrieval filter over the capture devices; see :data:`DEVICES`).
* Historical rows (issue 27; spec: canonical mapping, Q2, Q4, Q7): a legacy ``memories`` row and a
  retired ``short_term`` row are listed while active, and never when their own fields say deleted,
  superseded or invalidated (or a retired row was settled away); reading, consolidation and edits of
  other memories leave them alone. A successful re-extraction of the conversation a row cites (a
  changed transcript, a reprocess) or that conversation's delete retracts it; a delete of the memory
  or of everything removes it; a content edit turns it into the user's own memory, listed at once
  with its new words.

The rule extractor is a black box: which facts (contents, quotes) each transcript line yields is
learned once from the stack (:class:`LineFacts`, filled by a calibration run) and later steps are
held to that.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Owner lines (one segment each). Chosen so that no two contradict or duplicate each other, and
# no line contains its extracted content verbatim ("I ..." vs "User ..."), so a content needle
# found in a document is a stored fact, not the transcript.
OWNER_LINES: dict[str, str] = {
    "lisbon": "By the way I moved to Lisbon in March.",
    "meat": "I stopped eating meat about two years ago.",
    "marathon": "I'm training for the Lisbon half marathon in October.",
    "cello": "I play the cello every Sunday.",
    "hiking": "I love hiking in the mountains.",
    "dog": "I have a dog called Biscuit.",
    "acme": "I work as a data engineer at Acme.",
}
# Another speaker's lines: editing one changes the transcript but not the owner's facts.
OTHER_LINES: tuple[str, ...] = (
    "Oh nice, tell me more about that.", "Really? I did not know that at all.",
    "Sounds like a busy month for you.", "Ha, that is a good one.",
)
EXPLICIT_TEXTS: tuple[str, ...] = (
    "I keep a blue notebook for recipes", "My locker number at the pool is 118",
    "I prefer window seats on long flights", "My favourite tea is smoked lapsang",
    "I water the ficus every Thursday", "I learned to juggle three balls last winter",
)


@dataclass(frozen=True)
class Fact:
    content: str
    quotes: tuple[str, ...]
    route: str | None = None  # what the first consolidation pass did with it when alone


@dataclass
class LineFacts:
    """line key → the facts the extractor yields for it (learned once from the stack)."""

    by_line: dict[str, tuple[Fact, ...]] = field(default_factory=dict)

    def facts(self, line: str) -> tuple[Fact, ...]:
        return self.by_line.get(line, ())


@dataclass
class Conversation:
    owner: tuple[str, ...]  # line keys, in order
    other: str  # the other speaker's line
    version: int = 0

    def texts(self) -> list[str]:
        return [OWNER_LINES[k] for k in self.owner] + [self.other]


@dataclass
class Explicit:
    content: str
    history: list[str] = field(default_factory=list)  # every text it ever held
    long_term: bool = False  # a consolidation pass promoted it (explicit memories are user-asserted)


LEGACY_TEXTS: tuple[str, ...] = (
    "I once sold lemonade at the harbour market", "My first car was a green hatchback",
    "I used to sing in a church choir", "I grew tomatoes on the old balcony",
    "I still have my grandfather's pocket watch", "I spent a summer picking grapes in Burgundy",
)
LEGACY_STATES = ("active", "superseded", "invalidated", "gone")  # what the row's own fields say


@dataclass
class LegacyRow:
    """A historical row: its collection (``memories`` | ``short_term``), text, the conversation it
    cites (or None), and its own lifecycle (only ``active`` rows are listed)."""

    collection: str
    content: str
    cites: str | None
    state: str = "active"


@dataclass
class LifecycleModel:
    line_facts: LineFacts
    conversations: dict[str, Conversation] = field(default_factory=dict)
    ever_conversations: set[str] = field(default_factory=set)
    deleted: set[tuple[str, str]] = field(default_factory=set)  # (conversation id, content) the user deleted
    rejected: set[tuple[str, str]] = field(default_factory=set)
    corrected: dict[tuple[str, str], str] = field(default_factory=dict)
    reviewed: set[tuple[str, str]] = field(default_factory=set)  # routed to review at least once
    explicit: dict[str, Explicit] = field(default_factory=dict)  # memory id → explicit memory
    gone_texts: set[str] = field(default_factory=set)  # every text that was deleted at some point
    deleted_ids: set[str] = field(default_factory=set)
    settled: set[tuple[str, str]] = field(default_factory=set)  # (conversation, fact) a pass has seen
    kept_corrections: set[str] = field(default_factory=set)  # corrections whose source went: they stand alone
    wiped: bool = False
    capture_devices: dict[str, str | None] = field(default_factory=dict)  # conversation / explicit id → device
    legacy: dict[str, LegacyRow] = field(default_factory=dict)  # memory id → historical row still stored
    reprocess_tokens: set[str] = field(default_factory=set)  # conversations whose document holds one

    # ------------------------------------------------------------------------ derived views
    def sources(self) -> dict[str, set[str]]:
        """content → conversation ids that state it and whose statement the user did not delete
        or reject (corrections map to their corrected words)."""
        out: dict[str, set[str]] = {}
        for cid, conv in self.conversations.items():
            for line in conv.owner:
                for fact in self.line_facts.facts(line):
                    key = (cid, fact.content)
                    if key in self.deleted or key in self.rejected:
                        continue
                    out.setdefault(self.corrected.get(key, fact.content), set()).add(cid)
        return out

    def max_rows(self, content: str) -> int:
        """How many rows a default read may show for ``content``: one per statement no pass has
        seen yet, plus one for everything a pass merged (at least one)."""
        cids = self.sources().get(content, set())
        unsettled = sum(1 for cid in cids if (cid, self._original(cid, content)) not in self.settled)
        return max(1, unsettled + (1 if unsettled < len(cids) else 0))

    def _original(self, cid: str, content: str) -> str:
        for (c, original), corrected in self.corrected.items():
            if c == cid and corrected == content:
                return original
        return content

    def visible(self) -> set[str]:
        """Contents a default read must list, each exactly once."""
        return (set(self.sources()) | {e.content for e in self.explicit.values()} | self.legacy_visible()
                | self.kept_corrections)

    def live_texts(self) -> set[str]:
        """Every text a live source still holds (transcripts, their facts' quotes, explicit texts,
        hidden-but-not-deleted facts)."""
        texts: set[str] = set()
        for cid, conv in self.conversations.items():
            texts.update(conv.texts())
            for line in conv.owner:
                for fact in self.line_facts.facts(line):
                    texts.update(fact.quotes)
                    if (cid, fact.content) not in self.deleted:
                        texts.add(fact.content)  # rejected facts stay stored (hidden), not deleted
                        if (cid, fact.content) in self.corrected:
                            texts.add(self.corrected[(cid, fact.content)])
        for e in self.explicit.values():
            texts.update(e.history)
        texts.update(row.content for row in self.legacy.values())  # hidden rows stay stored (non-destructive)
        return texts | self.kept_corrections

    def forbidden(self) -> set[str]:
        """Deleted texts no live source restates: they must occur nowhere."""
        live = {t.casefold() for t in self.live_texts()}
        return {t for t in self.gone_texts
                if t.casefold() not in live and not any(t.casefold() in x for x in live)}

    def pending_review(self, content: str) -> list[tuple[str, str]]:
        return [k for k in self.reviewed if self.corrected.get(k, k[1]) == content]

    def visible_on(self, devices: set[str]) -> set[str]:
        """Contents a read scoped to ``devices`` must list (see :data:`DEVICES`): the default read's
        facts with a live source (a statement the user did not delete or reject) captured on one of
        them, and the explicit memories created on one of them."""
        seen = self.capture_devices
        out = {content for content, cids in self.sources().items() if any(seen.get(cid) in devices for cid in cids)}
        out |= {e.content for mid, e in self.explicit.items() if seen.get(mid) in devices}
        return out

    def captured_on(self, key: str, device: str | None) -> None:
        """Conversation id or explicit memory id ``key`` was captured on ``device``."""
        self.capture_devices[key] = device

    # ---------------------------------------------------------------------------- transitions
    def conversation_texts(self, cid: str) -> set[str]:
        conv = self.conversations[cid]
        texts = set(conv.texts())
        for line in conv.owner:
            for fact in self.line_facts.facts(line):
                texts.add(fact.content)
                texts.update(fact.quotes)
                if (cid, fact.content) in self.corrected:
                    texts.add(self.corrected[(cid, fact.content)])
        return texts

    def write(self, cid: str, owner: tuple[str, ...], other: str) -> None:
        previous = self.conversations.get(cid)
        # A new revision (the app's write also drops a reprocess token) is captured: Q7 replaces the
        # source everywhere, its historical rows included.
        if previous is not None and ((previous.owner, previous.other) != (owner, other)
                                     or cid in self.reprocess_tokens):
            self.retract_legacy(cid)
        self.reprocess_tokens.discard(cid)
        if previous is not None:
            # Lines the edit removed: their facts (from this source) are retracted (Q7).
            removed = set(previous.owner) - set(owner)
            for line in removed:
                for fact in self.line_facts.facts(line):
                    self._keep_correction((cid, fact.content))
                    self.gone_texts.add(fact.content)
                    self.gone_texts.update(fact.quotes)
                    self.reviewed.discard((cid, fact.content))  # retracted: its review entry goes
            if previous.other != other:
                self.gone_texts.add(previous.other)
        self.conversations[cid] = Conversation(owner, other, (previous.version + 1) if previous else 0)
        self.ever_conversations.add(cid)

    def _keep_correction(self, key: tuple[str, str]) -> None:
        """The source of a corrected fact is withdrawn: the correction stands on its own evidence."""
        if key in self.corrected and key not in self.deleted:
            self.kept_corrections.add(self.corrected.pop(key))

    def delete_conversation(self, cid: str, *, wipe: bool = False) -> None:
        self.retract_legacy(cid)
        self.gone_texts.update(self.conversation_texts(cid))
        if not wipe:
            for key in [k for k in self.corrected if k[0] == cid]:
                self._keep_correction(key)
        del self.conversations[cid]
        for key in [k for k in self.settled | self.rejected | set(self.corrected) | self.reviewed if k[0] == cid]:
            self.settled.discard(key)
            self.rejected.discard(key)
            self.corrected.pop(key, None)
            self.reviewed.discard(key)

    def delete_content(self, content: str, memory_ids: set[str]) -> None:
        """``DELETE /v3/memories/{id}`` of the memory listing ``content``: the whole logical memory."""
        self.deleted_ids |= memory_ids
        self.gone_texts.add(content)
        for mid, row in list(self.legacy.items()):
            if row.state == "active" and row.content == content:
                del self.legacy[mid]
        self.kept_corrections.discard(content)
        for mid, e in list(self.explicit.items()):
            if e.content == content:
                self.gone_texts.update(e.history)
                del self.explicit[mid]
        for cid, conv in self.conversations.items():
            for line in conv.owner:
                for fact in self.line_facts.facts(line):
                    key = (cid, fact.content)
                    if self.corrected.get(key, fact.content) == content and key not in self.rejected:
                        self.deleted.add(key)
                        self.reviewed.discard(key)  # its review entry is redacted with it
                        self.gone_texts.add(fact.content)

    def delete_all(self, memory_ids: set[str]) -> None:
        for content in sorted(self.visible()):
            self.delete_content(content, set())
        for key in self.rejected:  # hidden items are memories too: delete-all scrubs them (issue 20)
            self.deleted.add(key)
            self.gone_texts.add(key[1])
        self.deleted_ids |= memory_ids
        for mid in list(self.legacy):  # every historical row, shown or not
            self._drop_legacy(mid)

    def wipe(self) -> None:
        for cid in list(self.conversations):
            self.delete_conversation(cid, wipe=True)
        for e in self.explicit.values():
            self.gone_texts.update(e.history)
        self.explicit.clear()
        for mid in list(self.legacy):
            self._drop_legacy(mid)
        self.gone_texts |= self.kept_corrections
        self.kept_corrections.clear()
        self.wiped = True

    def add_explicit(self, memory_id: str, content: str) -> None:
        self.explicit[memory_id] = Explicit(content, [content])

    def edit_explicit(self, memory_id: str, content: str) -> None:
        e = self.explicit[memory_id]
        e.content = content
        e.history.append(content)
        # Issue 27: an edit is processed in its own request, as an explicit create is, and stays
        # listed with its new words (as Short-term) while consolidation re-admits it.
        e.long_term = False

    def consolidated(self) -> None:
        """A pass settled every pending item: explicit memories are promoted (manually added),
        conversation facts whose calibrated route is ``review`` wait in the review queue."""
        for e in self.explicit.values():
            e.long_term = True
        for cid, conv in self.conversations.items():
            for line in conv.owner:
                for fact in self.line_facts.facts(line):
                    key = (cid, fact.content)
                    self.settled.add(key)
                    if (fact.route == "review" and key not in self.deleted and key not in self.rejected
                            and key not in self.corrected):
                        self.reviewed.add(key)

    def revised_in_review(self, content: str) -> None:
        """A metadata revision of a fact waiting in review: nothing a surface shows changes, and
        the fact keeps waiting for the user's answer (its entry names the new revision)."""
        assert self.pending_review(content), f"{content!r} is not waiting in review"

    def resolve(self, content: str, decision: str, correction: str | None = None) -> None:
        for key in self.pending_review(content):
            self.reviewed.discard(key)
            if decision == "reject":
                self.rejected.add(key)
            elif decision == "correct" and correction:
                self.corrected[key] = correction

    # ------------------------------------------------------------------------ historical rows
    def legacy_visible(self) -> set[str]:
        return {row.content for row in self.legacy.values() if row.state == "active"}

    def seed_legacy(self, memory_id: str, collection: str, content: str, cites: str | None, state: str) -> None:
        self.legacy[memory_id] = LegacyRow(collection, content, cites, state)

    def _drop_legacy(self, memory_id: str) -> None:
        """The row is tombstoned (when it states a memory) and physically removed: its text goes."""
        row = self.legacy.pop(memory_id)
        self.gone_texts.add(row.content)
        self.deleted_ids.add(memory_id)

    def retract_legacy(self, cid: str) -> None:
        """A successful re-extraction or the delete of ``cid``: the rows citing it go (Q7, the
        delete/privacy matrix), whatever their own state."""
        for mid in [m for m, row in self.legacy.items() if row.cites == cid]:
            self._drop_legacy(mid)

    def reprocessed(self, cid: str) -> None:
        self.retract_legacy(cid)
        self.reprocess_tokens.add(cid)

    def edit_legacy(self, memory_id: str, content: str) -> None:
        """A content edit materialises the row as the user's own memory (issue 27: listed at once
        with its new words; it no longer depends on the conversation the row cited)."""
        row = self.legacy.pop(memory_id)
        self.explicit[memory_id] = Explicit(content, [row.content, content])

# ------------------------------------------------------------------------ device-scoped reads
# The spec's device identity: a conversation (and an explicit memory) carries the client device it
# was captured on; its memories' evidence keeps it, and ``device_scope=current|all|explicit`` is a
# universal retrieval filter over those devices. A memory of no known device (and every legacy row:
# legacy data has no device) is in no device's scope, only in ``all``.
DEVICES: tuple[str | None, ...] = ("ios_0a1b2c3d", "android_11223344", None)
SCOPED_DEVICES: tuple[str, ...] = ("ios_0a1b2c3d", "android_11223344")


def device_for(key: str) -> str | None:
    """The device the test captures ``key`` (a conversation id or an explicit text) on: fixed per
    key, so a conversation rewritten later comes from the same device."""
    return DEVICES[sum(key.encode()) % len(DEVICES)]
