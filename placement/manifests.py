"""Reading manifests: files, folders and stdin, multi-document YAML or JSON, into scheduler Documents.

Reading never stops at the first problem: all of them are collected, then the caller decides (the
`schedule` and `load_demo` commands exit 2). Text is decoded by `placement.scheduler.untrusted`
(its size, document, nesting and alias limits), the way the apiserver reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from placement.scheduler.documents import Document, Problem, shape_problems
from placement.scheduler.untrusted import MAX_BYTES, InputError, check_size, load_json, yaml_documents

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


def load_manifests(paths: Sequence[str], stdin: TextIO) -> LoadedManifests:
    """Read every PATH (a file, a folder read recursively in sorted order, or `-` for stdin)."""
    loaded = LoadedManifests()
    for path in paths:
        if path == STDIN_PATH:
            # one byte over the limit is enough to refuse it; the rest is never held in memory
            read_text(STDIN_SOURCE, stdin.read(MAX_BYTES + 1), as_json=False, loaded=loaded)
            continue
        location = Path(path)
        if not location.exists():
            loaded.sources.append(path)
            loaded.problems.append(Problem(path, None, "", "no such file or directory"))
            continue
        for file in _manifest_files(location):
            try:
                with file.open(encoding="utf-8") as opened:
                    text = opened.read(MAX_BYTES + 1)
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
    try:
        check_size(text, "the file")
    except InputError as exc:
        loaded.problems.append(Problem(source, None, "", str(exc)))
        return
    numbered = _numbered_objects(source, _json_documents(text) if as_json else yaml_documents(text))
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
        yield load_json(text)
    except InputError as exc:
        yield exc


def _numbered_objects(source: str, raw_documents: Iterable[Any]) -> Iterator[tuple[int, Any]]:
    """Number the objects of one source from 1; a list or `kind: List` contributes its items."""
    number = 0
    for raw in raw_documents:
        if isinstance(raw, InputError):
            number += 1
            yield number, Problem(source, number, "", str(raw))
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
    if isinstance(raw, dict) and raw.get("kind") == "List" and isinstance(items := raw.get("items"), list):
        return items
    return None
