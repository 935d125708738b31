"""Quantities print as Go's `Quantity.String()` once an object went through its Go type.

Every expected text was printed by apimachinery (v0.34.1, the version the conformance module
resolves) for a ManagedCluster's `status.allocatable` decoded from the given value.
"""

import pytest

from placement.scheduler.quantity import canonical_text

GO_PRINTED = [
    # kept as written: re-printing would not shorten it
    ("1500m", "1500m"),
    ("3Mi", "3Mi"),
    ("1023Ki", "1023Ki"),
    ("-2Gi", "-2Gi"),
    ("2048", "2048"),
    ("1024", "1024"),
    ("+1", "+1"),
    ("010", "010"),
    ("5e0", "5e0"),
    ("1e3", "1e3"),
    ("1e9", "1e9"),
    ("100m", "100m"),
    ("1200m", "1200m"),
    (16, "16"),
    (" 7 ", "7"),
    # canonical: the fewest digits, in the format of the suffix it was written with
    ("4096Mi", "4Gi"),
    ("2048Ki", "2Mi"),
    ("0.5Gi", "512Mi"),
    ("1.5Ki", "1536"),
    ("1000000", "1M"),
    ("1.5", "1500m"),
    ("0.1", "100m"),
    (0.25, "250m"),
    ("12e2", "1200"),
    ("1e-12", "1e-9"),
    ("0Gi", "0"),
    ("0", "0"),
    # an exponent the decimal suffixes lack prints without a suffix (Go's lookup fails silently)
    ("1000E", "1"),
]


@pytest.mark.parametrize(("written", "printed"), GO_PRINTED)
def test_canonical_text_as_go_prints_it(written: str | int | float, printed: str) -> None:
    assert canonical_text(written) == printed
