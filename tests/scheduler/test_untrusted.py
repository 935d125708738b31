"""The one reader of untrusted YAML and JSON: its limits, and the apiserver's way of reading YAML."""

import time

import pytest

from placement.scheduler.untrusted import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_DOCUMENTS,
    InputError,
    load_json,
    load_yaml,
    yaml_documents,
)
from tests.security.test_yaml_bombs import BOMB


def test_an_alias_bomb_is_refused_at_its_first_anchor_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(InputError, match=r"line 1, column 4: YAML anchors and aliases .* never need them"):
        load_yaml(BOMB)
    assert time.monotonic() - started < 0.1


@pytest.mark.parametrize("text", ["a: &x 1", "a: *x", "- !!str &x b"])
def test_any_anchor_or_alias_is_refused(text: str) -> None:
    with pytest.raises(InputError, match="anchors and aliases"):
        load_yaml(text)


def _nested_yaml(depth: int) -> str:
    return "[" * depth + "]" * depth


def _nested_json(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def test_nesting_is_read_up_to_the_limit() -> None:
    assert load_yaml(_nested_yaml(MAX_DEPTH)) is not None
    assert load_json(_nested_json(MAX_DEPTH)) is not None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500, 100_000])
def test_deeper_nesting_is_refused(depth: int) -> None:
    with pytest.raises(InputError, match=f"nested more than {MAX_DEPTH} levels deep"):
        load_yaml(_nested_yaml(depth))
    with pytest.raises(InputError, match=f"nested more than {MAX_DEPTH} levels deep"):
        load_json(_nested_json(depth))


def test_text_over_the_size_limit_is_refused_by_bytes() -> None:
    fits = "a: " + "é" * ((MAX_BYTES - 3) // 2)
    assert load_yaml(fits) == {"a": "é" * ((MAX_BYTES - 3) // 2)}
    with pytest.raises(InputError, match=f"YAML is too large: {MAX_BYTES + 1} bytes"):  # é is two bytes
        load_yaml(fits + "é")
    with pytest.raises(InputError, match="JSON is too large"):
        load_json(b'"' + b"x" * MAX_BYTES + b'"')


def test_a_stream_holds_at_most_the_document_limit() -> None:
    values = list(yaml_documents("---\na: 1\n" * MAX_DOCUMENTS))
    assert values == [{"a": 1}] * MAX_DOCUMENTS
    *read, refusal = yaml_documents("---\na: 1\n" * (MAX_DOCUMENTS + 1))
    assert (
        len(read) == MAX_DOCUMENTS and str(refusal) == f"too many YAML documents: more than {MAX_DOCUMENTS}"
    )


def test_a_refused_document_does_not_hide_the_next() -> None:
    first, refused, last = yaml_documents("a: 1\n---\nb: *x\n---\nc: 3\n")
    assert (first, last) == ({"a": 1}, {"c": 3})
    assert str(refused).startswith("invalid YAML at line 3, column 4: YAML anchors and aliases")


def test_yaml_is_read_as_the_apiserver_reads_it() -> None:
    # timestamps stay strings; YAML 1.1 booleans and hex integers as sigs.k8s.io/yaml (go-yaml v2) reads them
    assert load_yaml("t: 2024-01-01T00:00:00Z\nb: yes\nh: 0x10") == {
        "t": "2024-01-01T00:00:00Z",
        "b": True,
        "h": 16,
    }
    with pytest.raises(InputError, match='line 2, column 1: duplicate key "a"'):
        load_yaml("a: 1\na: 2")
    with pytest.raises(InputError, match=r"NUL characters \(\\u0000\) are not allowed"):
        load_yaml('a: "x\\0y"')


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_json_refuses_numbers_json_does_not_have(text: str) -> None:
    with pytest.raises(InputError, match="is not a number JSON allows"):
        load_json(text)
