"""IntOrString values (`3` or `"25%"`) as the Kubernetes helpers read them.

Each caller keeps its own upstream rounding and fallback rules; this module only parses and scales.
"""

from __future__ import annotations

import math
import re

_ATOI = re.compile(r"^[+-]?[0-9]+$")  # what Go's strconv.Atoi accepts


class IntOrStringError(ValueError):
    """A string that is not a percentage, or a value of the wrong type."""


def parse_percent(value: str) -> int:
    """`"25%"` -> 25, as `strconv.Atoi(strings.TrimSuffix(v, "%"))`; anything else raises."""
    if not isinstance(value, str) or not value.endswith("%"):
        raise IntOrStringError(f"{value} invalid type: string is not a percentage")
    digits = value[:-1]
    if not _ATOI.match(digits):
        raise IntOrStringError(f"invalid value for IntOrString: invalid value {value!r}")
    return int(digits)


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int:
    """k8s `intstr.GetScaledValueFromIntOrPercent`: ints as given, percentages of `total` rounded."""
    if isinstance(value, bool):
        raise IntOrStringError(f"invalid type for IntOrString: {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and not value.endswith("%"):
        raise IntOrStringError("invalid value for IntOrString: invalid type: string is not a percentage")
    percent = parse_percent(value)
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)
