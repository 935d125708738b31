"""Kubernetes resource quantities, parsed the way apimachinery's `resource.ParseQuantity` does.

Three views of one quantity are needed by the schedulers:
- `parse_quantity` gives the exact value (Fleet compares property values exactly, `1Gi == 1024Mi`);
- `approx_float` reproduces Go's `Quantity.AsApproximateFloat64`, including its floating-point error,
  because OCM's resource prioritizers and Fleet's property sorters truncate or round those floats;
- `canonical_text` is Go's `Quantity.String()`, the text a quantity field holds once the object went
  through the Go type (OCM's CEL predicates read the ManagedCluster that way: `4096Mi` reads `4Gi`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

_INT64_MAX = 2**63 - 1
_MAX_INT64_FACTORS = 18  # digits an int64 always holds (apimachinery's maxInt64Factors)
_NANO_SCALE = -9

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_OF = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_OF = {exponent: suffix for suffix, exponent in _BINARY_SUFFIXES.items()}

# apimachinery's formats, chosen by the suffix a quantity is written with
DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"

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
    format: str = field(default=DECIMAL_SI, compare=False)
    # the text Go keeps and prints as is (ParseQuantity caches it when its canonical form is no shorter)
    kept_text: str | None = field(default=None, compare=False)

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


def _suffix_base_exponent(suffix: str) -> tuple[int, int, str] | None:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        try:
            return 10, int(suffix[1:], 10), DECIMAL_EXPONENT
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
    base, exponent, form = base_exponent
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
            digits = significant + fraction
            value = int(digits) * mantissa
            if value <= _INT64_MAX:
                if form == BINARY_SI:
                    kept = int(digits) & 0x07 != 0
                else:
                    kept = scale % 3 == 0 and not digits.endswith("000") and digits[0] != "0"
                return Quantity(-value if negative else value, scale, form, text if kept else None)

    # Slow path (inf.Dec): exact decimal, rounded up to the nearest nano.
    exact = Fraction(int(whole + fraction or "0"), 10 ** len(fraction)) * Fraction(base) ** exponent
    if negative:
        exact = -exact
    return Quantity(_round_away_to_nano(exact), _NANO_SCALE, form)


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


def _canonical(quantity: Quantity) -> str:
    """apimachinery `Quantity.CanonicalizeBytes`: the fewest digits, in the quantity's format.

    A binary quantity below 1024 in magnitude or not a whole number prints as decimal; an exponent
    with no suffix in the format's table prints without one (Go's suffix lookup fails silently).
    """
    exact = quantity.exact
    if exact == 0:
        return "0"
    form = quantity.format
    if form == BINARY_SI and (abs(exact) < 1024 or exact.denominator != 1):
        form = DECIMAL_SI
    if form == BINARY_SI:
        amount, power = int(exact), 0
        while amount % 1024 == 0:
            amount, power = amount // 1024, power + 10
        return f"{amount}{_BINARY_SUFFIX_OF.get(power, '')}"
    amount, exponent = quantity.unscaled, quantity.scale
    while amount % 10 == 0:
        amount, exponent = amount // 10, exponent + 1
    while exponent % 3:
        amount, exponent = amount * 10, exponent - 1
    if form == DECIMAL_EXPONENT:
        return f"{amount}e{exponent}" if exponent else str(amount)
    return f"{amount}{_DECIMAL_SUFFIX_OF.get(exponent, '')}"


def canonical_text(value: str | int | float) -> str:
    """Go's `Quantity.String()` after `ParseQuantity`: the text kept from parsing, else canonical."""
    return _canonical_text(_as_text(value))


# a fleet's clusters repeat a few capacity texts, and a snapshot build converts every one of them
@lru_cache(maxsize=65536)
def _canonical_text(text: str) -> str:
    if text == "0":
        return text
    quantity = parse(text)
    return quantity.kept_text if quantity.kept_text is not None else _canonical(quantity)
