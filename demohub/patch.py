"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), the two patch types a CRD accepts."""

import copy
from typing import Any

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class PatchError(ValueError):
    """A patch that cannot be applied; the API server answers 422."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(document: Any, path: str) -> tuple[Any, str]:
    parts = _pointer(path)
    if not parts:
        raise PatchError("the whole document cannot be the target of this operation")
    node = document
    for part in parts[:-1]:
        node = _child(node, part)
    return node, parts[-1]


def _child(node: Any, part: str) -> Any:
    try:
        return node[int(part)] if isinstance(node, list) else node[part]
    except (KeyError, IndexError, ValueError, TypeError) as error:
        raise PatchError(f"path segment {part!r} does not exist") from error


def _get(document: Any, path: str) -> Any:
    node = document
    for part in _pointer(path):
        node = _child(node, part)
    return node


def _list_index(node: list[Any], part: str, *, inserting: bool) -> int:
    if inserting and part == "-":
        return len(node)
    if not part.isdigit() or int(part) > len(node) - (0 if inserting else 1):
        raise PatchError(f"list index {part!r} is out of range")
    return int(part)


def _add(document: Any, path: str, value: Any) -> Any:
    if path == "":
        return value
    parent, last = _parent(document, path)
    if isinstance(parent, list):
        parent.insert(_list_index(parent, last, inserting=True), value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise PatchError(f"cannot add to a scalar at {path!r}")
    return document


def _remove(document: Any, path: str) -> Any:
    parent, last = _parent(document, path)
    if isinstance(parent, list):
        return parent.pop(_list_index(parent, last, inserting=False))
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    raise PatchError(f"path {path!r} does not exist")


def _apply_operation(document: Any, operation: dict[str, Any]) -> Any:
    op, path = operation.get("op"), operation.get("path")
    if not isinstance(path, str):
        raise PatchError("every operation needs a string path")
    if op == "add":
        return _add(document, path, copy.deepcopy(operation.get("value")))
    if op == "remove":
        _remove(document, path)
        return document
    if op == "replace":
        _remove(document, path)
        return _add(document, path, copy.deepcopy(operation.get("value")))
    if op in ("move", "copy"):
        source = operation.get("from")
        if not isinstance(source, str):
            raise PatchError(f"{op} needs a string 'from'")
        value = _remove(document, source) if op == "move" else copy.deepcopy(_get(document, source))
        return _add(document, path, value)
    if op == "test":
        if _get(document, path) != operation.get("value"):
            raise PatchError(f"test failed: the value at {path!r} differs")
        return document
    raise PatchError(f"unknown operation {op!r}")


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: apply the operations in order to a copy of `target`; any failure rejects the whole patch."""
    if not isinstance(operations, list) or not all(isinstance(o, dict) for o in operations):
        raise PatchError("a JSON patch must be a list of operation objects")
    document = copy.deepcopy(target)
    for operation in operations:
        document = _apply_operation(document, operation)
    return document
