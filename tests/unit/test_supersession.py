"""Facts that stay current (issue 32): a later statement that ends a fact supersedes it at
consolidation, the old fact stays as history with its valid time, and a read ``as_of`` a moment
answers what was true then. Services on the in-memory fakes; the stack's version is
tests/e2e/test_as_of.py.

Expectations come from the issue's rules: an ending (sold, quit, moved out, broke up, no longer)
of something a fact of the *same subject* names ends that fact; a plan, a wish, a negation or
someone else's ending does not; the old fact is valid from its conversation's day until the day of
the conversation that ended it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.domain import paths
from core.domain.records import MemoryItem, valid_at
from core.domain.routing import contradicts, ends
from core.errors import BadRequest
from core.services import capture, consolidation, deletion, projection, reads, temporal
from tests.unit.fakes.ports import World, world

UID = "u1"


@pytest.mark.parametrize(("new", "old"), [
    ("User sold the Volvo last week", "User drives an old blue Volvo"),
    ("User quit their job at St Mary's last month", "User works as a nurse at St Mary's"),
    ("User quit their job", "User works as a data engineer at Acme"),
    ("User moved out of their Seattle apartment", "User lives in Seattle"),
    ("User broke up with Sam", "User is dating Sam"),
    ("User is no longer vegetarian", "User is a vegetarian"),
    ("User said, asked “Is everything okay?”: We broke up with Maya. like 3 weeks ago",
     "User has a girlfriend named Maya"),
    # A change of the subject's own job, home or partner ends the fact on that topic, shared word or not.
    ("User took an in-house job at Moss & Pine", "User is a freelance designer for small shops"),
    ("User said: the company relocated us, I'm in Vancouver now", "User has lived in Seoul for 3 years"),
    ("User said: Luca and I split in the summer", "User said: My boyfriend thinks he's a rock star"),
    ("User said: we had to put Biscuit down last month", "User has a dog named Biscuit"),
    ("User stopped running", "User runs every morning"),  # "running" is "runs"
    # A new state that replaces the old one, said with "now", "from now on", "these days".
    ("User said: honestly I'm a tea person now", "User said: a double espresso first thing, every day"),
    ("User said: it's the bus these days, the car got too expensive to park",
     "User said: I cycle to the office every day"),
    ("User said: plain food from now on, my stomach can't take chillies", "User loves spicy curries"),
    ("User said: they're a Spurs supporter now, long story", "User is a big Arsenal fan"),
    # Ended another way: traded in, handed over for good, nothing for ages, no more.
    ("User said: traded in the Xbox for a bike", "User plays on their Xbox most nights"),
    ("User said: haven't smoked since new year", "User said: twenty cigarettes a day, I know"),
    ("User said: no more wine for me, doctor's orders", "User has a glass of wine with dinner"),
    ("User said: I sold my bike, I take the bus now", "User cycles to work"),
    # An engagement ends being single.
    ("User said: can you help plan our engagement dinner", "User has been single for years"),
    # A new value told in passing, with no ending word: a new partner's name, another town, another
    # employer, a routine's time taken by something else.
    ("User's boyfriend tomasz is cooking tonight", "User is dating Ollie"),
    ("User said: the landlord of my flat in hove is so slow", "User lives in a flat in Croydon"),
    ("User said: my manager at the library wants me in early", "User works as a cashier at Lidl"),
    ("User said: thursday evenings are for my choir now", "User plays squash on Thursday evenings"),
    ("User said: first week at the new firm done", "User works as a junior architect at Halden Studio"),
    # Given away or taken up again, said another way.
    ("User said: the woman who bought my vespa sent me a photo", "User rides a Vespa to work"),
    ("User said: three months smoke free today", "User smokes after dinner"),
    ("User said: we're back in leeds now, the coast was too quiet", "User lives in a cottage in Whitby"),
    ("User said: not vegetarian any more, bacon won", "User is vegetarian"),  # the negation is the change
    ("User said: stopped meditating, no time", "User meditates every morning"),  # "meditating" meets "meditates"
    ("User said: called off the engagement with noor", "User is engaged to Noor"),
    # A taste turned, told as a change of mind.
    ("User said: gone right off reality tv, it's all the same", "User loves reality tv"),
    ("User said: honestly cycling has become my favourite part of the week", "User hates cycling"),
    ("User has changed their mind on olives", "User loves olives"),
    # Said another way, or in the third person the memory is written in.
    ("User said: handed the keys back for the canal street flat on friday", "User rents a flat on Canal Street"),
    ("User said: not working at the deli these days", "User works part-time at a deli called Mondo"),
    ("User's second wife ines and they are off to porto", "User is married to Ruth"),
    ("User said: the engagement's off. please don't ask", "User is engaged to Callum"),
    ("User said: my boss at the agency wants the deck by friday", "User is a freelance illustrator"),
    # What goes on in a later clause about something else does not keep the fact.
    ("User left Halden in may and the pension's still with them", "User works as an engineer at Halden"),
    ("User said: gave up smoking in june and still off them", "User smokes after dinner"),
    ("User said: them and ryan broke up at new year", "User's boyfriend is Ryan"),
])
def test_an_ending_of_what_a_fact_names_ends_it(new: str, old: str) -> None:
    assert ends(new, old)
    assert contradicts(new, old) == "firm"


@pytest.mark.parametrize(("new", "old"), [
    ("User is thinking about selling the Volvo", "User drives an old blue Volvo"),  # a plan
    ("User never sold the Volvo", "User drives an old blue Volvo"),  # a negation
    ("User takes the tram everywhere", "User drives an old blue Volvo"),  # nothing ended
    ("User sold the Fiat", "User drives an old blue Volvo"),  # something else ended
    ("User said: my brother sold his Fiesta, the same red one as mine", "User drives a red Ford Fiesta"),
    ("User said: still vegan, no longer curious about burgers", "User is vegan"),  # the fact goes on
    ("User sold the Volvo", "User sold the Volvo last week"),  # an ending does not end an ending
    ("User's friend just quit drinking too", "User doesn't drink"),  # someone else's change
    ("User said: my sister moved to Leeds", "User lives in a flat in York"),  # someone else's move
    ("User said: my boss retired", "User works as a nurse at St Mary's"),  # someone else's job
    ("User took an in-house job at Moss & Pine", "User lives in a flat in York"),  # another topic
    ("User said: I also really like jazz now", "User's favourite band is Blur"),  # an addition
    ("User said: it's even more fun now the kids come along", "User swims every Saturday"),  # goes on
    ("User said: we got a second car, a little Kia", "User drives a Subaru"),  # an addition
    ("User said: my husband only drinks tea now", "User drinks black coffee"),  # someone else's
    ("User said: maybe I'll switch to tea one day", "User drinks black coffee"),  # a wish
    ("User said: we're planning our anniversary trip", "User is married to Anna"),  # goes on
    ("User said: sold the Fiat, finally", "User drives a Subaru"),  # a thing it does not name
    ("User said: I'm at the gym now, call you later", "User goes to the gym three times a week"),  # this moment
    ("User said: we're driving now, text me the address", "User drives a Subaru"),  # this moment
    ("User said: I need a coffee now", "User drinks tea in the morning"),  # a need, not a new state
    ("User said: stopped at the coffee shop on the way", "User drinks tea in the morning"),  # a halt
    ("User said: it's pouring now, so no run today", "User runs every morning"),  # the weather
    ("User said: I just got back from the gym now", "User goes to the gym three times a week"),  # this moment
    ("User said: my coworker quit the library, so it's just me now", "User works at the library"),  # someone else's
    ("User said: left my badge at work again", "User works as a cashier at Lidl"),  # a thing left somewhere
    ("User said: people think we split up, we didn't", "User is dating Ollie"),  # a belief, denied
    ("User said: my sister's new boyfriend tomasz is lovely", "User is dating Ollie"),  # someone else's partner
    ("User said: before I started squash I swam", "User plays squash on Thursday evenings"),  # the past
    ("User said: my flat in croydon is freezing", "User lives in a flat in Croydon"),  # the same value
    ("User said: the subaru needs new brakes", "User drives a Subaru"),  # a new thing for it, not a new one
    ("User said: noor quit her job at the clinic", "User is engaged to Noor"),  # her change, not the user's
    ("User said: noor and i hit our five year anniversary", "User is married to Noor"),  # goes on
    ("User said: people ask if we split because she's not on my feed anymore", "User is married to Noor"),
    ("User hates olives", "User loves olives"),  # a bare flip is a doubt (review), not an ending
    ("User said: my brother has gone off olives", "User loves olives"),  # someone else's taste
    ("User said: the neighbours' cat died, poppy keeps looking for her", "User has a cat called Poppy"),
    ("User said: Kate's quit swimming, she does parkrun now", "User swims every Saturday"),  # named, not the user
    ("User said: he just started at the fire station", "User is a teacher at Hillcrest"),  # his job, not the user's
    ("User said: quit the chess club chat, still playing every night", "User plays chess every night"),  # goes on
])
def test_no_ending_no_supersession(new: str, old: str) -> None:
    assert not ends(new, old)


def _conversation(date: str, *owner_lines: str) -> dict:
    segments = [{"id": f"s{i}", "text": text, "speaker": "SPEAKER_0", "is_user": True}
                for i, text in enumerate(owner_lines)]
    return {"status": "completed", "started_at": f"{date}T09:30:00+00:00", "transcript_segments": segments}


def _items(w: World) -> list[MemoryItem]:
    return [MemoryItem.from_store(data) for data in w.store.collection(paths.user(UID) + "/memory_items").values()]


def _settle(w: World) -> None:
    consolidation.run_pass(w.ctx, UID)
    projection.drain_user(w.ctx, UID)


def _volvo_then_sold(w: World) -> tuple[MemoryItem, MemoryItem]:
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2026-01-10", "I drive an old blue Volvo."))
    _settle(w)
    [volvo] = [i for i in _items(w) if "Volvo" in i.content]
    assert (volvo.layer, volvo.status) == ("long_term", "active")
    w.clock.advance(days=1)
    capture.capture_conversation(w.ctx, UID, "c2", _conversation(
        "2026-03-02", "I sold the Volvo last week, so I take the tram everywhere."))
    _settle(w)
    by_id = {i.id: i for i in _items(w)}
    [sold] = [i for i in by_id.values() if i.content.startswith("User sold the Volvo")]
    return by_id[volvo.id], sold


def test_selling_the_car_ends_the_car_and_keeps_it_as_history() -> None:
    w = world()
    volvo, sold = _volvo_then_sold(w)
    assert (volvo.layer, volvo.status, volvo.superseded_by) == ("long_term", "superseded", sold.id)
    assert volvo.valid_from == datetime(2026, 1, 10, tzinfo=UTC)  # the first conversation's day
    assert volvo.valid_to == datetime(2026, 3, 2, tzinfo=UTC)  # the day of the one that ended it
    assert (sold.layer, sold.status, sold.supersedes) == ("long_term", "active", [volvo.id])
    assert sold.valid_to is None

    current, _ = reads.list_memories(w.ctx, UID, reads.ListQuery())
    assert volvo.id not in {m.id for m in current} and sold.id in {m.id for m in current}
    assert reads.get_memory(w.ctx, UID, volvo.id).id == volvo.id  # readable by id, as itself
    indexed = {d.memory_id for d in w.keyword.rows.values()} | {d.memory_id for d in w.vector.rows.values()}
    assert volvo.id not in indexed and sold.id in indexed  # the projections follow: history is in no index

    then, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2026, 2, 1, tzinfo=UTC)))
    assert [m.id for m in then] == [volvo.id]  # what was true on 1 February
    later, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2026, 3, 2, 12, tzinfo=UTC)))
    assert volvo.id not in {m.id for m in later} and sold.id in {m.id for m in later}


def test_deleting_the_current_fact_deletes_its_history_too() -> None:
    w = world()
    volvo, sold = _volvo_then_sold(w)
    out = deletion.delete_memory(w.ctx, UID, sold.id)
    assert volvo.id in out["deleted"]
    stored = {i.id: i for i in _items(w)}
    assert stored[volvo.id].record_status == "tombstoned" and stored[volvo.id].content == ""
    then, _ = reads.list_memories(w.ctx, UID, reads.ListQuery(as_of=datetime(2026, 2, 1, tzinfo=UTC)))
    assert then == []


def test_a_third_partys_ending_never_ends_the_users_fact() -> None:
    w = world()
    capture.capture_conversation(w.ctx, UID, "c1", _conversation("2026-01-10", "I drive an old blue Volvo."))
    _settle(w)
    capture.capture_conversation(w.ctx, UID, "c2", _conversation("2026-03-02", "My sister Kate sold her Volvo."))
    _settle(w)
    [volvo] = [i for i in _items(w) if i.content == "User drives an old blue Volvo"]
    assert (volvo.status, volvo.valid_to) == ("active", None)


def test_as_of_parses_dates_and_refuses_anything_else() -> None:
    assert temporal.parse_as_of("2026-02-01") == datetime(2026, 2, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert temporal.parse_as_of("2026-02-01T10:00:00+02:00") == datetime(2026, 2, 1, 8, tzinfo=UTC)
    assert temporal.parse_as_of("2026-02-01T10:00") == datetime(2026, 2, 1, 10, tzinfo=UTC)
    assert temporal.parse_as_of(None) is None
    for bad in ("2026-13-01", "yesterday", "2026-02-30T10:00"):
        with pytest.raises(BadRequest):
            temporal.parse_as_of(bad)


def test_valid_time_is_half_open() -> None:
    item = MemoryItem(id="m", uid=UID, content="x", valid_from=datetime(2026, 1, 1, tzinfo=UTC),
                      valid_to=datetime(2026, 2, 1, tzinfo=UTC))
    assert not valid_at(item, datetime(2025, 12, 31, tzinfo=UTC))
    assert valid_at(item, datetime(2026, 1, 1, tzinfo=UTC))
    assert not valid_at(item, datetime(2026, 2, 1, tzinfo=UTC))
