"""Kubernetes resource quantities, parsed the way apimachinery's `resource.ParseQuantity` does.

Two views of one quantity are needed by the schedulers:
- `parse_quantity` gives the exact value (Fleet compares property values exactly, `1Gi == 1024Mi`);
- `approx_float` reproduces Go's `Quantity.AsApproximateFloat64`, including its floating-point error,
  because OCM's resource prioritizers and Fleet's property sorters truncate or round those floats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

_INT64_MAX = 2**63 - 1
_MAX_INT64_FACTORS = 18  # digits an int64 always holds (apimachinery's maxInt64Factors)
_NANO_SCALE = -9

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

# sign, integer digits, optional fraction, then a suffix of [eEinumkKMGTP]* with an optional signed exponent
_QUANTITY_RE = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*(?:[+-]?[0-9]+)?)$")

# Go's math.Pow10 tables: exact powers below 1e32, then products/quotients by 1e32 steps.
_POW10_TAB = [float(10**i) for i in range(32)]
_POW10_POS32 = [1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288]
_POW10_NEG32 = [1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320]


class QuantityError(ValueError):
    """The string is not a Kubernetes quantity."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity: `unscaled * 10**scale`, in the same representation Go keeps."""

    unscaled: int
    scale: int

    @property
    def exact(self) -> Fraction:
        return Fraction(self.unscaled) * Fraction(10) ** self.scale

    @property
    def approx(self) -> float:
        if self.scale == 0:
            return float(self.unscaled)
        return float(self.unscaled) * go_pow10(self.scale)


def go_pow10(n: int) -> float:
    """Go's `math.Pow10`, bit for bit."""
    if 0 <= n <= 308:
        return _POW10_POS32[n // 32] * _POW10_TAB[n % 32]
    if -323 <= n < 0:
        return _POW10_NEG32[-n // 32] / _POW10_TAB[-n % 32]
    return float("inf") if n > 0 else 0.0


def _suffix_base_exponent(suffix: str) -> tuple[int, int] | None:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:], 10)
        except ValueError:
            return None
    return None


def _round_away_to_nano(value: Fraction) -> int:
    """Unscaled value at scale 10**-9, rounded away from zero (inf.RoundUp) like Go's slow path."""
    scaled = value * 10**9
    magnitude = -(-abs(scaled.numerator) // scaled.denominator)
    return magnitude if scaled >= 0 else -magnitude


@lru_cache(maxsize=65536)
def parse(text: str) -> Quantity:
    """Parse a quantity string; raise QuantityError for anything apimachinery would reject."""
    match = _QUANTITY_RE.match(text)
    if not match or not (match.group(2) or match.group(3)):
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}"
        )
    sign, whole, fraction, suffix = match.group(1), match.group(2), match.group(3) or "", match.group(4)
    base_exponent = _suffix_base_exponent(suffix)
    if base_exponent is None:
        raise QuantityError(f"unable to parse quantity's suffix: {text!r}")
    base, exponent = base_exponent
    negative = sign == "-"
    significant = whole.lstrip("0") or "0"

    # Fast path (int64Amount): the digits fit an int64 and the scale is not finer than nano.
    if base == 10:
        scale, mantissa = exponent, 1
        precision = _MAX_INT64_FACTORS - (len(significant) + len(fraction))
    elif exponent >= 0 and not fraction:
        scale, mantissa = 0, 1 << exponent
        precision = 15 - len(significant) - int(exponent * 3 / 10) - 1
    else:
        scale, mantissa, precision = 0, 1, -1
    if precision >= 0:
        scale -= len(fraction)
        if scale >= _NANO_SCALE:
            value = int(whole + fraction or "0") * mantissa
            if value <= _INT64_MAX:
                return Quantity(-value if negative else value, scale)

    # Slow path (inf.Dec): exact decimal, rounded up to the nearest nano.
    exact = Fraction(int(whole + fraction or "0"), 10 ** len(fraction)) * Fraction(base) ** exponent
    if negative:
        exact = -exact
    return Quantity(_round_away_to_nano(exact), _NANO_SCALE)


def _as_text(value: str | int | float) -> str:
    if isinstance(value, bool):
        raise QuantityError(f"not a quantity: {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if not value.is_integer() else str(int(value))
    return str(value).strip()


def parse_quantity(value: str | int | float) -> Fraction:
    """Exact value of a quantity (as Go's `Quantity.Cmp` sees it)."""
    return parse(_as_text(value)).exact


def approx_float(value: str | int | float) -> float:
    """Go's `Quantity.AsApproximateFloat64` of the parsed quantity."""
    return parse(_as_text(value)).approx
