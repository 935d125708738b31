"""Reading manifests: files, folders and stdin, multi-document YAML or JSON, into scheduler Documents.

Reading never stops at the first problem: all of them are collected, then the caller decides (the
`schedule` and `load_demo` commands exit 2). YAML is read the way the apiserver reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import yaml

from placement.scheduler.documents import Document, Problem, shape_problems

STDIN_PATH = "-"
STDIN_SOURCE = "<stdin>"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(slots=True)
class LoadedManifests:
    """Documents read from the given paths, in reading order, plus what could not be read."""

    documents: list[Document] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def ordered(self, problems: Iterable[Problem]) -> list[Problem]:
        """`problems` in reading order: by source as read, then by document number."""
        rank = {source: position for position, source in enumerate(self.sources)}
        return sorted(problems, key=lambda p: (rank.get(p.source, len(rank)), p.document or 0))


class KubernetesYamlLoader(yaml.SafeLoader):
    """YAML as the apiserver reads it: timestamps stay strings and a repeated key is an error."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if isinstance(key, str) and key in seen:
                # upstream: sigs.k8s.io/yaml refuses duplicate keys ("key already set in map")
                problem = f'duplicate key "{key}"'
                raise yaml.constructor.ConstructorError(None, None, problem, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# Text the database cannot store (PostgreSQL refuses NUL in text and "\u0000" in jsonb) is refused
# where manifests are read, with the position of the string that holds it.
NUL_REFUSED = "NUL characters (\\u0000) are not allowed."


def holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(holds_nul(item) for item in value)
    return False


def _string_without_nul(loader: KubernetesYamlLoader, node: yaml.ScalarNode) -> str:
    value = loader.construct_scalar(node)
    if holds_nul(value):
        raise yaml.constructor.ConstructorError(None, None, NUL_REFUSED, node.start_mark)
    return value


KubernetesYamlLoader.add_constructor("tag:yaml.org,2002:str", _string_without_nul)

# upstream decodes YAML into JSON, where an unquoted RFC 3339 time is a string, not a datetime
KubernetesYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_manifests(paths: Sequence[str], stdin: TextIO) -> LoadedManifests:
    """Read every PATH (a file, a folder read recursively in sorted order, or `-` for stdin)."""
    loaded = LoadedManifests()
    for path in paths:
        if path == STDIN_PATH:
            read_text(STDIN_SOURCE, stdin.read(), as_json=False, loaded=loaded)
            continue
        location = Path(path)
        if not location.exists():
            loaded.sources.append(path)
            loaded.problems.append(Problem(path, None, "", "no such file or directory"))
            continue
        for file in _manifest_files(location):
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                loaded.sources.append(str(file))
                loaded.problems.append(Problem(str(file), None, "", f"cannot read: {exc}"))
                continue
            read_text(str(file), text, as_json=file.suffix == ".json", loaded=loaded)
    return loaded


def _manifest_files(location: Path) -> list[Path]:
    if location.is_dir():
        return sorted(p for p in location.rglob("*") if p.is_file() and p.suffix in MANIFEST_SUFFIXES)
    return [location]


def read_text(source: str, text: str, *, as_json: bool, loaded: LoadedManifests) -> None:
    """Read one source's text (YAML stream or JSON) into `loaded`, as `load_manifests` reads files."""
    loaded.sources.append(source)
    numbered = _numbered_objects(source, _json_documents(text) if as_json else _yaml_documents(text))
    for number, body in numbered:
        if isinstance(body, Problem):
            loaded.problems.append(body)
            continue
        document = Document(source, number, body)
        problems = shape_problems(document)
        loaded.problems.extend(problems)
        if not problems:
            loaded.documents.append(document)


def _json_documents(text: str) -> Iterator[Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        yield _ParseFailure(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
        return
    yield _ParseFailure(f"invalid JSON: {NUL_REFUSED}") if holds_nul(value) else value


def _yaml_documents(text: str) -> Iterator[Any]:
    """Each YAML document of a stream, or a `_ParseFailure`; a broken document does not hide the next."""
    for position, (first_line, chunk) in enumerate(_yaml_chunks(text)):
        try:
            value = yaml.load(chunk, Loader=KubernetesYamlLoader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as exc:
            yield _ParseFailure(_yaml_failure(exc, first_line))
            continue
        # text before the first `---` is a document only when it holds something (not just comments)
        if position > 0 or value is not None:
            yield value


def _yaml_chunks(text: str) -> Iterator[tuple[int, str]]:
    """Split a stream at `---` lines: (0-based line of the chunk's first line, chunk text)."""
    first_line, lines = 0, []
    for number, line in enumerate(text.splitlines(keepends=True)):
        if _DOCUMENT_START.match(line):
            yield first_line, "".join(lines)
            # keep what follows `---` on the same line (e.g. `--- !!map`) and its line number
            first_line, lines = number, [line[3:]]
        else:
            lines.append(line)
    yield first_line, "".join(lines)


_DOCUMENT_START = re.compile(r"---(\s|$)")


@dataclass(frozen=True, slots=True)
class _ParseFailure:
    message: str


def _yaml_failure(exc: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, yaml.MarkedYAMLError) and mark is not None:
        line = first_line + mark.line + 1
        return f"invalid YAML at line {line}, column {mark.column + 1}: {exc.problem}"
    return f"invalid YAML: {exc}"


def _numbered_objects(source: str, raw_documents: Iterable[Any]) -> Iterator[tuple[int, Any]]:
    """Number the objects of one source from 1; a list or `kind: List` contributes its items."""
    number = 0
    for raw in raw_documents:
        if isinstance(raw, _ParseFailure):
            number += 1
            yield number, Problem(source, number, "", raw.message)
            continue
        items = _list_items(raw)
        if items is None:
            number += 1
            # an empty document (`---` twice) counts, so numbers match what an editor shows
            if raw is not None:
                yield number, raw
            continue
        for item in items:
            number += 1
            yield number, item


def _list_items(raw: Any) -> list[Any] | None:
    if isinstance(raw, list):
        return raw
    if isinstance(raw, dict) and raw.get("kind") == "List" and isinstance(raw.get("items"), list):
        return raw["items"]
    return None


