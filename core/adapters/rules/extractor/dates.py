"""Relative dates resolved against the day a conversation took place.

"last Tuesday" said on Thursday 14 November 2024 is Tuesday 12 November 2024; "the 21st" is the 21st
of the session's month; "8th of June" is the 8 June nearest the session. :func:`resolve` returns each
phrase it understood with its calendar date (or month, or week), in the order they appear;
:func:`annotation` writes them as a short parenthesis for a memory's content. Phrases without a
session date are left as they are (the content then keeps the speaker's words only).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, timedelta

_I = re.IGNORECASE
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}

_PHRASE = re.compile(
    r"\b(?:"
    r"(?P<yesterday>yesterday)|(?P<today>today|tonight|this morning|this afternoon|this evening)|"
    r"(?P<tomorrow>tomorrow)|"
    r"(?P<rel_week>last|next|this) week(?:end)?|(?P<rel_month>last|next|this) month|"
    r"(?P<rel_year>last|next|this) year|"
    r"(?P<ago_n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few)\s+"
    r"(?P<ago_unit>days?|weeks?|months?|years?)\s+ago|"
    r"(?:(?P<wd_mod>last|next|this|on|since)\s+)?(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)(?P<gone>\s+just gone)?(?!\s+(?:the\s+)?\d)|"
    r"(?:the\s+)?" + _DAY.replace("day>", "d1>") + r"\s+(?:of\s+)?" + _MONTH.replace("month>", "m1>") +
    r"(?:,?\s+(?P<y1>\d{4}))?|" +
    _MONTH.replace("month>", "m2>") + r"\s+(?:the\s+)?" + _DAY.replace("day>", "d2>") + r"(?!\d)(?:,?\s+(?P<y2>\d{4}))?|"
    r"(?:on\s+)?the\s+(?P<d3>[0-3]?\d)(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|"
    r"nov|dec))|"
    r"(?P<in_mod>in|last|next|this|since|until|by|end of)\s+" + _MONTH.replace("month>", "m4>") + r"(?!\s+\d)"
    r")\b", _I)


# The tense a speaker tells a date in: "I left Acme in June" said in December is the June before;
# "we're moving in June" the June to come. Told without a tense, a date is the nearest one.
_FUTURE = re.compile(r"\b(?:will|['’]ll|going\s+to|gonna|plan(?:s|ning)?\s+to|planning|hope\s+to|want\s+to|"
                     r"would\s+like|['’]d\s+(?:like|love)|next|upcoming|until|till|by|can['’]t\s+wait|due|"
                     r"(?:am|['’]m|are|['’]re|is|['’]s)\s+(?:\w+ly\s+)?\w+ing)\b", _I)
_PAST = re.compile(r"\b(?:was|were|did|had|went|got|made|took|came|left|bought|sold|met|saw|ran|began|"
                   r"quit|moved|became|found|lost|won|gave|ago|last|since|used\s+to|['’]ve|have\s+been|has\s+been|"
                   r"[a-z]{2,}ed)\b", _I)


def tense(text: str) -> int:
    """-1 when ``text`` tells the past, 1 the future, 0 when it does not say."""
    if _FUTURE.search(text):
        return 1
    return -1 if _PAST.search(text) else 0


def _month_index(name: str) -> int:
    name = name.lower()[:3]
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name))


def _nearest(day: date, month: int, dom: int, when: int = 0) -> date | None:
    """The date with this month and day nearest to ``day`` (last year, this year or next): the
    latest one not after ``day`` when told in the past (``when`` -1), the first one not before it
    when told of the future (1). ``dom`` 0 is a whole month (any of its days counts)."""
    options = _around(day, month, dom)
    if when and dom == 0:
        this_month = [d for d in options if (d.year, d.month) == (day.year, day.month)]
        if this_month:
            return this_month[0]
    if when < 0:
        options = [d for d in options if d <= day]
    elif when > 0:
        options = [d for d in options if d >= day]
    return min(options, key=lambda d: abs((d - day).days)) if options else None


def _around(day: date, month: int, dom: int) -> list[date]:
    """The dates with this month and day last year, this year and next (those that exist)."""
    options = []
    for year in (day.year - 1, day.year, day.year + 1):
        try:
            options.append(date(year, month, dom or 1))
        except ValueError:
            continue
    return options


def _fmt(d: date) -> str:
    return f"{d.day} {_MONTHS[d.month - 1].capitalize()} {d.year}"


def _month_name(year: int, month: int) -> str:
    return f"{_MONTHS[month - 1].capitalize()} {year}"


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + (day.month - 1) + months
    return index // 12, index % 12 + 1


def _one(m: re.Match[str], day: date, when: int = 0) -> str | None:
    g = m.groupdict()
    relative = _relative(g, day)
    if relative is not None:
        return relative
    if g["ago_n"]:
        return _ago(g, day)
    if g["weekday"]:
        return _weekday(g, day, when)
    return _calendar(g, day, when)


def _relative(g: Mapping[str, str | None], day: date) -> str | None:
    """yesterday, today, tomorrow; last/this/next week, month or year."""
    if g["yesterday"]:
        return _fmt(day - timedelta(days=1))
    if g["today"]:
        return _fmt(day)
    if g["tomorrow"]:
        return _fmt(day + timedelta(days=1))
    shifts = {"last": -1, "next": 1, "this": 0}
    if g["rel_week"]:
        monday = day + timedelta(days=7 * shifts[g["rel_week"].lower()] - day.weekday())
        return "the week of " + _fmt(monday)
    if g["rel_month"]:
        year, month = _shift_month(day, shifts[g["rel_month"].lower()])
        return _month_name(year, month)
    if g["rel_year"]:
        return str(day.year + shifts[g["rel_year"].lower()])
    return None


def _ago(g: Mapping[str, str | None], day: date) -> str:
    """"three days ago", "a couple of weeks ago", ..."""
    raw = str(g["ago_n"]).lower().replace("a couple of", "couple of").replace("a few", "few")
    n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, 1)
    unit = str(g["ago_unit"]).lower().rstrip("s")
    if unit == "day":
        return _fmt(day - timedelta(days=n))
    if unit == "week":
        return "the week of " + _fmt(day - timedelta(days=7 * n + day.weekday()))
    if unit == "month":
        return _month_name(*_shift_month(day, -n))
    return str(day.year - n)


def _weekday(g: Mapping[str, str | None], day: date, when: int = 0) -> str:
    """"Tuesday", "next Friday", "this Sunday"; a plain or "on" weekday told of the future is the
    one to come, else the one just past."""
    target = _WEEKDAYS.index(str(g["weekday"]).lower())
    mod = (g["wd_mod"] or "").lower()
    if mod == "next" or (mod == "this" and target > day.weekday()) or (mod in ("", "on") and when > 0):
        ahead = (target - day.weekday()) % 7 or 7
        return _fmt(day + timedelta(days=ahead))
    back = (day.weekday() - target) % 7 or 7  # a plain weekday in conversation is the one just past
    return _fmt(day - timedelta(days=back))


def _calendar(g: Mapping[str, str | None], day: date, when: int = 0) -> str | None:
    """A day of a month (with or without its year), "the 21st", a month on its own."""
    if g["d1"] or g["d2"]:
        return _day_of_month(g, day, when)
    if g["d3"]:
        return _day_alone(int(str(g["d3"])), day, when)
    if g["m4"]:
        return _month_alone(g, day, when)
    return None


def _day_of_month(g: Mapping[str, str | None], day: date, when: int) -> str | None:
    """"21 February", "February 21st, 2025": with its year as told, else the nearest such day."""
    dom = int(str(g["d1"] or g["d2"]))
    month = _month_index(str(g["m1"] or g["m2"]))
    year_text = g["y1"] or g["y2"]
    if year_text:
        try:
            return _fmt(date(int(year_text), month, dom))
        except ValueError:
            return None
    found = _nearest(day, month, dom, when)
    return _fmt(found) if found else None


def _day_alone(dom: int, day: date, when: int) -> str | None:
    """"The 21st": this month's, or last month's told in the past (next month's of the future) when
    this month's is on the wrong side of ``day``."""
    year, month = day.year, day.month
    if when < 0 and dom > day.day:
        year, month = _shift_month(day, -1)
    elif when > 0 and dom < day.day:
        year, month = _shift_month(day, 1)
    try:
        return _fmt(date(year, month, dom))
    except ValueError:
        return None


def _month_alone(g: Mapping[str, str | None], day: date, when: int) -> str | None:
    """A month on its own, "last March", "until June": the nearest one, on the side its word says."""
    month = _month_index(str(g["m4"]))
    mod = str(g["in_mod"]).lower()
    found = _nearest(day, month, 0, -1 if mod in ("last", "since") else 1 if mod in ("next", "until", "by")
                     else when)
    return _month_name(found.year, found.month) if found else None


def resolve(text: str, day: date | None) -> list[tuple[str, str]]:
    """(phrase, resolved date) for each date phrase of ``text`` relative to ``day``; [] without a day."""
    if day is None:
        return []
    out: list[tuple[str, str]] = []
    when = tense(text)
    for m in _PHRASE.finditer(text):
        phrase = " ".join(m.group(0).split())
        if phrase.lower() in {"may", "march"}:  # the verb "may", "march" on their own are not dates
            continue
        resolved = _one(m, day, when)
        if resolved and (phrase, resolved) not in out and resolved.lower() != phrase.lower():
            out.append((phrase, resolved))
    return out


def annotation(text: str, day: date | None) -> str:
    """" (last Tuesday: 12 November 2024; the 21st: 21 February 2025)" or "" when nothing resolves."""
    found = resolve(text, day)
    if not found:
        return ""
    return " (" + "; ".join(f"{phrase}: {when}" for phrase, when in found) + ")"
