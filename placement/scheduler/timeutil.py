"""Time helpers with Go/Kubernetes semantics. The scheduler never reads the clock: `now` is an argument."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# Go's zero time.Time (0001-01-01T00:00:00Z): a taint with it has always been there.
ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)

_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


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


def format_time(value: datetime | None) -> str | None:
    """RFC 3339 in UTC with a `Z`, as Kubernetes writes `metav1.Time` (second precision)."""
    if value is None:
        return None
    return value.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_go_duration(text: str) -> timedelta:
    """Go's `time.ParseDuration`: a signed sequence of decimal numbers with units (`1h30m`, `90s`, `0`)."""
    original = text
    if not isinstance(text, str) or not text:
        raise DurationError(f'time: invalid duration "{original}"')
    negative = text[0] == "-"
    if text[0] in "+-":
        text = text[1:]
    if text == "0":
        return timedelta(0)
    if not text:
        raise DurationError(f'time: invalid duration "{original}"')
    total = 0.0
    position = 0
    while position < len(text):
        match = _DURATION_PART.match(text, position)
        if not match or match.group(1) in ("", "."):
            raise DurationError(f'time: invalid duration "{original}"')
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    return timedelta(seconds=-total if negative else total)
