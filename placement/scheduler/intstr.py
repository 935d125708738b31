"""IntOrString values (`3` or `"25%"`) as the Kubernetes helpers read them.

Each caller keeps its own upstream rounding and fallback rules; this module only parses and scales.
"""

from __future__ import annotations

import math
import re

_ATOI = re.compile(r"^[+-]?[0-9]+$")  # what Go's strconv.Atoi accepts
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# What Go's strconv.ParseFloat accepts: decimal, hexadecimal with a p exponent, inf/infinity/nan.
_GO_DECIMAL_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GO_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_GO_SPECIAL_FLOAT = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)  # no sign on NaN


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


def go_atoi(text: str) -> int:
    """Go's strconv.Atoi on a 64-bit platform, with its error texts (raised as ValueError)."""
    if not _ATOI.fullmatch(text):
        raise ValueError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f'strconv.Atoi: parsing "{text}": value out of range')
    return value


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


def go_parse_float(text: str) -> float:
    """Go's `strconv.ParseFloat(text, 64)`; raises ValueError with Go's message (overflow is an error)."""
    if _GO_SPECIAL_FLOAT.fullmatch(text):
        return float(text)
    try:
        if _GO_DECIMAL_FLOAT.fullmatch(text):
            value = float(text)
        elif _GO_HEX_FLOAT.fullmatch(text):
            value = float.fromhex(text)
        else:
            raise ValueError(f'strconv.ParseFloat: parsing "{text}": invalid syntax')
    except OverflowError:
        value = math.inf
    if math.isinf(value):
        raise ValueError(f'strconv.ParseFloat: parsing "{text}": value out of range')
    return value


def ceil_percent_of(value: str, total: int) -> int | None:
    """OCM's `ceil(ParseFloat(trim(v, "%")) / 100 * float64(total))` for a `"p%"` string.

    None where the float is not finite (Go's int conversion is then undefined and lands below zero,
    which every caller treats as "use the default"). Raises IntOrStringError without a `%` and
    ValueError (Go's text) for an unparsable number.
    """
    if not value.endswith("%"):
        raise IntOrStringError(f"{value} invalid type: string is not a percentage")
    scaled = go_parse_float(value[:-1]) / 100 * float(total)
    return math.ceil(scaled) if math.isfinite(scaled) else None
