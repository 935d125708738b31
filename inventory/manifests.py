"""Reading Kubernetes manifests (multi-document YAML or JSON files, or folders of them).

Problems are reported as `FILE: document N: reason`, N counting documents from 1 within the file.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from django.utils.dateparse import parse_datetime

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


class InvalidManifest(ValueError):
    """A document that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Manifest:
    source: str
    index: int
    obj: Mapping[str, Any]

    @property
    def where(self) -> str:
        return f"{self.source}: document {self.index}"

    @property
    def group(self) -> str:
        api_version = self.obj["apiVersion"]
        return api_version.rpartition("/")[0]

    @property
    def kind(self) -> str:
        return self.obj["kind"]

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.obj["metadata"].get("namespace") or ""


@dataclass
class ReadResult:
    manifests: list[Manifest] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def manifest_files(path: Path) -> list[Path]:
    """The file itself, or every manifest file below a folder in a stable order."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in MANIFEST_SUFFIXES)
    return [path]


def read_manifests(paths: Iterable[Path]) -> ReadResult:
    result = ReadResult()
    for path in paths:
        if not path.exists():
            result.errors.append(f"{path}: no such file or directory")
            continue
        for file in manifest_files(path):
            _read_file(file, result)
    return result


def _read_file(file: Path, result: ReadResult) -> None:
    index = 0
    try:
        with file.open(encoding="utf-8") as stream:
            for index, obj in enumerate(yaml.safe_load_all(stream), start=1):
                if obj is None:  # an empty document between two `---`
                    continue
                manifest = Manifest(str(file), index, obj)
                problem = _shape_problem(obj)
                if problem:
                    result.errors.append(f"{manifest.where}: {problem}")
                else:
                    result.manifests.append(manifest)
    except yaml.YAMLError as exc:
        result.errors.append(f"{file}: document {index + 1}: invalid YAML: {_yaml_reason(exc)}")
    except (OSError, UnicodeDecodeError) as exc:
        result.errors.append(f"{file}: cannot read: {exc}")


def _yaml_reason(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"{exc.problem} (line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1})"
    return str(exc)


def _shape_problem(obj: Any) -> str | None:
    """What makes a document unusable as a Kubernetes object, or None."""
    if not isinstance(obj, dict):
        return f"expected a Kubernetes object (a mapping), got {type(obj).__name__}"
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            return f"missing {key}"
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return "missing metadata"
    if not isinstance(metadata.get("name"), str) or not metadata["name"]:
        return "missing metadata.name"
    for key in ("namespace", "uid", "resourceVersion"):
        if key in metadata and not isinstance(metadata[key], str | type(None)):
            return f"metadata.{key}: expected a string"
    for key in ("labels", "annotations"):
        if not _is_string_map(metadata.get(key)):
            return f"metadata.{key}: expected a mapping of strings"
    for key in ("spec", "status"):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            return f"{key}: expected a mapping"
    return None


def _is_string_map(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def field_value(obj: Mapping[str, Any], path: str, expected: type, default: Any) -> Any:
    """obj at a dotted path, `default` when absent or null; InvalidManifest when of another type."""
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            return default
    if not isinstance(value, expected):
        raise InvalidManifest(f"{path}: expected a {_type_word(expected)}, got {type(value).__name__}")
    return value


def field_time(obj: Mapping[str, Any], path: str) -> datetime | None:
    raw = field_value(obj, path, str, None)
    if raw is None:
        return None
    try:
        parsed = parse_datetime(raw)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise InvalidManifest(f"{path}: {raw!r} is not an RFC 3339 time")
    return parsed


def _type_word(expected: type) -> str:
    return {dict: "mapping", list: "list", str: "string"}.get(expected, expected.__name__)
