"""The one reader of untrusted YAML and JSON: manifests, hub annotations, form fields, request bodies.

Every text a user or a hub object supplies is decoded here, so the same limits hold at every entry
point: at most `MAX_BYTES` of text, `MAX_DOCUMENTS` documents in a YAML stream and `MAX_DEPTH` levels
of nesting, and no YAML anchors or aliases. An alias repeats a node without repeating its text, so a
kilobyte of aliases can expand into gigabytes of values; Kubernetes manifests never need them, so they
are refused outright instead of being counted. Everything else is read the way the apiserver reads it
(sigs.k8s.io/yaml): timestamps stay strings and a repeated key is an error.

Refusals raise `InputError` (a ValueError) whose message says what was refused and where.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml._yaml import CParser

MAX_BYTES = 1024 * 1024
MAX_DOCUMENTS = 1000
MAX_DEPTH = 64

# Text the database cannot store (PostgreSQL refuses NUL in text and "\u0000" in jsonb) is refused
# where it is read, with the position of the string that holds it.
NUL_REFUSED = "NUL characters (\\u0000) are not allowed."
ALIAS_REFUSED = "YAML anchors and aliases (& and *) are not allowed; Kubernetes manifests never need them"


class InputError(ValueError):
    """Text refused while decoding: malformed, too large, too deeply nested, or using YAML aliases."""


def check_size(text: str | bytes, what: str = "text", limit: int = MAX_BYTES) -> None:
    """Raise InputError when `text` is longer than `limit` bytes (UTF-8)."""
    size = len(text) if isinstance(text, bytes) or len(text) > limit else len(text.encode())
    if size > limit:
        raise InputError(f"{what} is too large: {size} bytes (at most {limit})")


def holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(holds_nul(item) for item in value)
    return False


class KubernetesYamlLoader(
    yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver
):
    """YAML as the apiserver reads it, without aliases and at most `MAX_DEPTH` levels deep.

    libyaml scans and parses (the pure-Python scanner is several times slower, and quadratic on long
    flow lines); the Python composer on top of its events is where aliases and depth are refused.
    """

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        yaml.composer.Composer.__init__(self)
        self.depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        # an alias event is a node event whose anchor names the node it repeats
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            raise _refusal(ALIAS_REFUSED, event)
        if not isinstance(event, yaml.CollectionStartEvent):
            return super().compose_node(parent, index)
        if self.depth >= MAX_DEPTH:
            problem = f"nested more than {MAX_DEPTH} levels deep"
            raise _refusal(problem, event)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                # upstream: sigs.k8s.io/yaml refuses duplicate keys ("key already set in map")
                problem = f'duplicate key "{key}"'
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _refusal(problem: str, event: yaml.Event) -> yaml.composer.ComposerError:
    """The composer's error refusing `event`, marked where the event starts."""
    # libyaml's events carry their own Mark class, which the error prints as it prints yaml.error.Mark;
    # the stubs accept only the latter
    return yaml.composer.ComposerError(None, None, problem, event.start_mark)  # type: ignore[arg-type]


def _string_without_nul(loader: KubernetesYamlLoader, node: yaml.ScalarNode) -> str:
    value = loader.construct_scalar(node)
    if holds_nul(value):
        raise yaml.constructor.ConstructorError(None, None, NUL_REFUSED, node.start_mark)
    return value


# the stubs accept constructors only for PyYAML's own loader classes; any loader class takes them
KubernetesYamlLoader.add_constructor("tag:yaml.org,2002:str", _string_without_nul)  # type: ignore[type-var]

# upstream decodes YAML into JSON, where an unquoted RFC 3339 time is a string, not a datetime
KubernetesYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}


def load_yaml(text: str, *, first_line: int = 0) -> Any:
    """One YAML document (None when empty); `first_line` shifts the line numbers of errors."""
    check_size(text, "YAML")
    loader = KubernetesYamlLoader(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise InputError(_yaml_failure(exc, first_line)) from None
    finally:
        loader.dispose()


def yaml_documents(text: str) -> Iterator[Any | InputError]:
    """Each document of a YAML stream, or the InputError that refused it; a broken document does not
    hide the next. A stream over the size or document limit is one InputError and nothing else."""
    try:
        check_size(text, "YAML")
    except InputError as exc:
        yield exc
        return
    for position, (first_line, chunk) in enumerate(_yaml_chunks(text)):
        if position > MAX_DOCUMENTS:
            yield InputError(f"too many YAML documents: more than {MAX_DOCUMENTS}")
            return
        try:
            value = load_yaml(chunk, first_line=first_line)
        except InputError as exc:
            yield exc
            continue
        # text before the first `---` is a document only when it holds something (not just comments)
        if position > 0 or value is not None:
            yield value


def _yaml_chunks(text: str) -> Iterator[tuple[int, str]]:
    """Split a stream at `---` lines: (0-based line of the chunk's first line, chunk text)."""
    first_line = 0
    lines: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True)):
        if _DOCUMENT_START.match(line):
            yield first_line, "".join(lines)
            # keep what follows `---` on the same line (e.g. `--- !!map`) and its line number
            first_line, lines = number, [line[3:]]
        else:
            lines.append(line)
    yield first_line, "".join(lines)


_DOCUMENT_START = re.compile(r"---(\s|$)")


def _yaml_failure(exc: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, yaml.MarkedYAMLError) and mark is not None:
        line = first_line + mark.line + 1
        return f"invalid YAML at line {line}, column {mark.column + 1}: {exc.problem}"
    return f"invalid YAML: {exc}"


def load_json(text: str | bytes, *, refuse_nul: bool = True) -> Any:
    """One JSON value, without NaN or Infinity (not JSON, and Kubernetes refuses them). With
    `refuse_nul` off, NUL characters are left to a reader that can name the field holding them."""
    check_size(text, "JSON")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InputError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid JSON: not UTF-8: {exc}") from None
    check_depth(value, "JSON")
    if refuse_nul and holds_nul(value):
        raise InputError(f"invalid JSON: {NUL_REFUSED}")
    return value


def _refuse_constant(name: str) -> Any:
    raise InputError(f"invalid JSON: {name} is not a number JSON allows")


def check_depth(value: Any, what: str) -> None:
    """Raise InputError when containers in `value` nest more than `MAX_DEPTH` levels (walked without
    recursion, so a value too deep for Python's stack is refused rather than crashing the reader)."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth >= MAX_DEPTH:
                    raise InputError(f"invalid {what}: nested more than {MAX_DEPTH} levels deep")
                pending.append((child, depth + 1))
