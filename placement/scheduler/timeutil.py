"""Time helpers with Go/Kubernetes semantics. The scheduler never reads the clock: `now` is an argument."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import overload

# Go's zero time.Time (0001-01-01T00:00:00Z): a taint with it has always been there.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)

_UNIT_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX_DURATION_NANOS = 2**63 - 1  # Go durations are int64 nanoseconds (about 292 years)
_DIGITS = re.compile(r"[0-9]*")
_FRACTION = re.compile(r"T[0-9:]*[.,]([0-9]+)")
_UNIT = re.compile(r"[^0-9.]*")


class DurationError(ValueError):
    """Not a Go duration string."""


def parse_time(value: str | datetime | None) -> datetime | None:
    """Parse an RFC 3339 timestamp (`Z` or offset); None stays None. Naive datetimes are taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"not an RFC 3339 time: {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def sub_microsecond_nanos(value: str | datetime | None) -> int:
    """The nanoseconds below the microsecond of an RFC 3339 timestamp (0 to 999): Go's time keeps them,
    `parse_time` drops them (a datetime holds microseconds)."""
    if not isinstance(value, str) or (fraction := _FRACTION.search(value)) is None:
        return 0
    return int(fraction.group(1)[6:9].ljust(3, "0"))


@overload
def format_time(value: datetime) -> str: ...
@overload
def format_time(value: datetime | None) -> str | None: ...
def format_time(value: datetime | None) -> str | None:
    """RFC 3339 in UTC with a `Z`, as Kubernetes writes `metav1.Time` (second precision)."""
    if value is None:
        return None
    return value.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _run(pattern: re.Pattern[str], text: str, start: int = 0) -> str:
    """The text `pattern` matches at `start`: `_DIGITS` and `_UNIT` match the empty string too, so
    they always match."""
    match = pattern.match(text, start)
    assert match is not None
    return match.group()


def parse_go_duration(text: str) -> timedelta:
    """Go's `time.ParseDuration`: signed decimal numbers with units (`1h30m`, `1.5h`, `90s`, `0`).

    Errors carry Go's wording (`missing unit`, `unknown unit "d"`), since they reach users verbatim.
    """
    quoted = f'"{text}"'
    rest = text[1:] if text[:1] in ("+", "-") else text
    if rest == "0":
        return timedelta(0)
    if not rest:
        raise DurationError(f"time: invalid duration {quoted}")
    total = 0
    while rest:
        whole = _run(_DIGITS, rest)
        rest = rest[len(whole) :]
        fraction = ""
        if rest.startswith("."):
            fraction = _run(_DIGITS, rest, 1)
            rest = rest[1 + len(fraction) :]
        if not whole and not fraction:
            raise DurationError(f"time: invalid duration {quoted}")
        unit = _run(_UNIT, rest)
        rest = rest[len(unit) :]
        if not unit:
            raise DurationError(f"time: missing unit in duration {quoted}")
        if unit not in _UNIT_NANOS:
            raise DurationError(f'time: unknown unit "{unit}" in duration {quoted}')
        scale = _UNIT_NANOS[unit]
        # integer nanoseconds, fractions truncated, as Go accumulates them
        total += int(whole or "0") * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
        if total > _MAX_DURATION_NANOS:
            raise DurationError(f"time: invalid duration {quoted}")
    return timedelta(microseconds=(-total if text.startswith("-") else total) / 1000)


# the longest Go time.Duration, to the microsecond a timedelta holds
MAX_GO_DURATION = timedelta(microseconds=_MAX_DURATION_NANOS // 1000)


def go_until(moment: datetime, now: datetime) -> timedelta:
    """Go's `moment.Sub(now)` (what `time.Until` gives): a Duration, so it stops at about 292 years
    either way instead of growing with the distance between the two instants."""
    return max(-MAX_GO_DURATION, min(moment - now, MAX_GO_DURATION))
