"""Hub objects are untrusted input: the limits an object must keep before the sync or the watcher stores it.

A hub is another administrator's API server; what it serves may be broken, or written to hurt whoever
reads it. Every object is checked here against the limits the Kubernetes API server and the OCM and
Fleet CRDs apply (so an object a real hub accepted passes), plus caps on list lengths that no real
object comes near. `problems` answers every broken limit by field path; an object with any is not
stored (inventory.sync records it as an inventory.RejectedObject with `reason`).

Values are never echoed in full: a reason quotes at most the first SHOWN characters of a string.
"""

import functools
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from inventory.models import ManagedCluster
from placement.scheduler.labels import (
    dns_label_error,
    dns_subdomain_error,
    label_value_error,
    qualified_name_error,
)

# apimachinery's TotalAnnotationSizeLimitB: keys and values together.
MAX_ANNOTATIONS_BYTES = 256 * 1024
# etcd's default request limit (--max-request-bytes, 1.5 MiB): no hub stores a larger object.
MAX_OBJECT_BYTES = 1536 * 1024
# Labels are copied into every scheduler snapshot and listed on pages; real clusters carry tens.
MAX_LABELS = 256
# The OCM agent reports at most 20 custom claims by default, beside a handful of reserved ones.
MAX_CLAIMS = 64
# Taints are matched against every toleration of every placement on each scheduling run.
MAX_TAINTS = 64
# Conditions are one per type; controllers write a few each.
MAX_CONDITIONS = 64
# An add-on reports one score per measure it computes; the scheduler reads each of them per placement.
MAX_SCORES = 64
# Fleet agents report one status per agent type (member, work, service export).
MAX_AGENT_STATUSES = 16
# Fleet cluster properties are what property providers report; tens per cluster.
MAX_PROPERTIES = 256
# OCM splits a placement's decisions into PlacementDecision objects of at most 100 clusters each.
MAX_DECISIONS = 100
# OCM's Taint CRD: the key matches the qualified-name pattern, and key and value have these limits.
OCM_TAINT_KEY_MAX, OCM_TAINT_VALUE_MAX = 316, 1024
# OCM's ManagedClusterClaim CRD limits.
CLAIM_NAME_MAX, CLAIM_VALUE_MAX = 253, 1024
# metav1.Condition's limits (type as a qualified name, reason and message by length).
CONDITION_TYPE_MAX, CONDITION_REASON_MAX, CONDITION_MESSAGE_MAX = 316, 1024, 32768
# The columns uid and resourceVersion are stored in (a UUID and an etcd revision are far shorter).
UID_MAX = RESOURCE_VERSION_MAX = 64
# Every taint key of a cluster, joined, is stored in one column lists filter on.
TAINT_KEYS_MAX = ManagedCluster.TAINT_KEYS_MAX
OCM_EFFECTS = ("NoSelect", "PreferNoSelect", "NoSelectIfNew")
FLEET_EFFECTS = ("NoSchedule",)
INT32 = (-(2**31), 2**31 - 1)
# A NUL character in any string, as JSON writes it (an escaped backslash before "u0000" is not one):
# PostgreSQL stores none in text or jsonb, so it would fail the whole batch there (SQLite takes it).
NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
# A reason names at most this many problems, and quotes at most SHOWN characters of a value.
MAX_REPORTED = 5
SHOWN = 40
# A check remembers its answers for strings up to this long: label keys and values and condition types
# repeat across every object of a hub, and the bound keeps what is remembered small whatever a hub sends.
REMEMBERED_LENGTH = 320
REMEMBERED = 8192

Problems = list[str]


def shown(value: Any) -> str:
    """`value` as a reason quotes it: JSON, cut to SHOWN characters with its length when longer."""
    if isinstance(value, str) and len(value) > SHOWN:
        return f"{json.dumps(value[:SHOWN], ensure_ascii=False)}… ({len(value)} characters)"
    if isinstance(value, str | int | float | bool) or value is None:
        return json.dumps(value, ensure_ascii=False)
    return f"a {_type_word(value)}"


def _type_word(value: Any) -> str:
    if isinstance(value, Mapping):
        return "mapping"
    return {list: "list", str: "string", bool: "boolean", int: "integer"}.get(
        type(value), type(value).__name__
    )


@functools.cache
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _at(obj: Any, path: str) -> Any:
    for part in _parts(path):
        # dict is tested first: the Mapping check (an abstract class) costs several times more
        obj = obj.get(part) if isinstance(obj, (dict, Mapping)) else None
    return obj


def _typed(problems: Problems, value: Any, path: str, expected: type) -> bool:
    """Whether `value` (not None) is of the `expected` type; records the problem when it is not."""
    if isinstance(value, expected) and not (expected is int and isinstance(value, bool)):
        return True
    problems.append(f"{path}: expected a {_type_word(expected())}, got {_type_word(value)}")
    return False


def _too_many(problems: Problems, items: Any, path: str, limit: int) -> bool:
    if len(items) > limit:
        problems.append(f"{path}: {len(items)} entries, at most {limit} are kept")
        return True
    return False


def _string(problems: Problems, value: Any, path: str, check: Callable[[str], str | None]) -> None:
    """A string field that `check` answers why it is invalid (None when valid)."""
    if _typed(problems, value, path, str) and (why := check(value)) is not None:
        problems.append(f"{path}: invalid value {shown(value)}: {why}")


def _valid(value: Any, check: Callable[[str], str | None]) -> bool:
    return isinstance(value, str) and check(value) is None


def _length(limit: int, minimum: int = 0) -> Callable[[str], str | None]:
    def check(value: str) -> str | None:
        if len(value) > limit:
            return f"must be no more than {limit} characters"
        return "must not be empty" if len(value) < minimum else None

    return check


def _ocm_taint_key(key: str) -> str | None:
    return _length(OCM_TAINT_KEY_MAX)(key) or qualified_name_error(key, part_lengths=False)


def _optional(check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    return lambda value: None if value == "" else check(value)


def _remembered(check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """`check`, remembering its answers for short strings (REMEMBERED_LENGTH)."""
    cached = functools.lru_cache(maxsize=REMEMBERED)(check)
    return lambda value: cached(value) if len(value) <= REMEMBERED_LENGTH else check(value)


_qualified_name = _remembered(qualified_name_error)
_label_value = _remembered(label_value_error)


# --- metadata, shared by every kind


def _metadata(problems: Problems, obj: Mapping[str, Any], namespaced: bool) -> None:
    metadata = _at(obj, "metadata")
    if not _typed(problems, metadata, "metadata", dict):
        return
    _string(problems, metadata.get("name"), "metadata.name", _required(dns_subdomain_error))
    if namespaced:
        _string(problems, metadata.get("namespace"), "metadata.namespace", _required(dns_label_error))
    for field, limit in (("uid", UID_MAX), ("resourceVersion", RESOURCE_VERSION_MAX)):
        if metadata.get(field) is not None:
            _string(problems, metadata[field], f"metadata.{field}", _length(limit))
    labels = metadata.get("labels")
    if labels is not None and _typed(problems, labels, "metadata.labels", dict):
        _labels(problems, labels)
    annotations = metadata.get("annotations")
    if annotations is not None and _typed(problems, annotations, "metadata.annotations", dict):
        _annotations(problems, annotations)


def _required(check: Callable[[str], str | None]) -> Callable[[str], str | None]:
    return lambda value: "must not be empty" if value == "" else check(value)


def _labels(problems: Problems, labels: Mapping[Any, Any]) -> None:
    if _too_many(problems, labels, "metadata.labels", MAX_LABELS):
        return
    for key, value in labels.items():
        if _valid(key, _qualified_name) and _valid(value, _label_value):
            continue  # the common case, without building the paths
        _string(problems, key, "metadata.labels key", qualified_name_error)
        if isinstance(key, str):
            _string(problems, value, f"metadata.labels[{shown(key)}]", label_value_error)


def _annotations(problems: Problems, annotations: Mapping[Any, Any]) -> None:
    size = 0
    for key, value in annotations.items():
        # apimachinery checks the lowercased key: annotation prefixes are case-insensitive there
        _string(problems, key, "metadata.annotations key", lambda k: qualified_name_error(k.lower()))
        if isinstance(key, str) and _typed(problems, value, f"metadata.annotations[{shown(key)}]", str):
            size += len(key) + len(value)
    if size > MAX_ANNOTATIONS_BYTES:
        problems.append(
            f"metadata.annotations: {size} bytes, must have at most {MAX_ANNOTATIONS_BYTES} bytes"
        )


# --- lists in spec and status


def _entries(problems: Problems, items: Any, path: str, limit: int) -> list[Mapping[str, Any]]:
    """The mappings of the list `items` at `path` (none when absent, of another type, or over `limit`)."""
    if items is None or not _typed(problems, items, path, list) or _too_many(problems, items, path, limit):
        return []
    entries = []
    for index, item in enumerate(items):
        # the path is built only for an entry of the wrong type
        if isinstance(item, dict) or _typed(problems, item, f"{path}[{index}]", dict):
            entries.append(item)
    return entries


def _fields(
    problems: Problems,
    entries: list[Mapping[str, Any]],
    path: str,
    checks: dict[str, Callable[[str], str | None]],
) -> None:
    """Each present string field of each entry, by its check."""
    for index, entry in enumerate(entries):
        for name, check in checks.items():
            value = entry.get(name)
            if value is not None and not (isinstance(value, str) and check(value) is None):
                _string(problems, value, f"{path}[{index}].{name}", check)


def _condition_type(value: str) -> str | None:
    return _length(CONDITION_TYPE_MAX)(value) or qualified_name_error(value, part_lengths=False)


CONDITION_CHECKS = {
    "type": _remembered(_condition_type),
    "status": _length(CONDITION_REASON_MAX),
    "reason": _length(CONDITION_REASON_MAX),
    "message": _length(CONDITION_MESSAGE_MAX),
}


def _conditions(problems: Problems, conditions: Any, path: str) -> None:
    _fields(problems, _entries(problems, conditions, path, MAX_CONDITIONS), path, CONDITION_CHECKS)


def _taint_checks(
    key: Callable[[str], str | None], value_max: int, effects: tuple[str, ...]
) -> dict[str, Callable[[str], str | None]]:
    return {"key": _required(key), "value": _optional(_length(value_max)), "effect": _one_of(effects)}


def _taints(
    problems: Problems, obj: Mapping[str, Any], checks: dict[str, Callable[[str], str | None]]
) -> None:
    taints = _entries(problems, _at(obj, "spec.taints"), "spec.taints", MAX_TAINTS)
    before = len(problems)
    _fields(problems, taints, "spec.taints", checks)
    if len(problems) > before:
        return
    keys = [taint_key for taint in taints if isinstance(taint_key := taint.get("key"), str)]
    if len(keys) < len(taints):
        problems.append("spec.taints: every taint needs a key")
    elif (joined := len(",".join(keys)) + 2) > TAINT_KEYS_MAX:
        problems.append(f"spec.taints: the keys take {joined} characters together, at most {TAINT_KEYS_MAX}")


def _one_of(allowed: tuple[str, ...]) -> Callable[[str], str | None]:
    return lambda value: None if value in allowed else f"supported values: {', '.join(allowed)}"


def _int32(problems: Problems, entries: list[Mapping[str, Any]], path: str, name: str) -> None:
    for index, entry in enumerate(entries):
        value, where = entry.get(name), f"{path}[{index}].{name}"
        if value is not None and _typed(problems, value, where, int) and not INT32[0] <= value <= INT32[1]:
            problems.append(f"{where}: {value} is out of the int32 range")


# --- kinds


OCM_TAINT_CHECKS = _taint_checks(_remembered(_ocm_taint_key), OCM_TAINT_VALUE_MAX, OCM_EFFECTS)
# Fleet's webhook checks taints as Kubernetes does: a qualified-name key and a label value
FLEET_TAINT_CHECKS = _taint_checks(_qualified_name, 63, FLEET_EFFECTS)
CLAIM_CHECKS = {"name": _length(CLAIM_NAME_MAX, 1), "value": _length(CLAIM_VALUE_MAX, 1)}
SCORE_CHECKS = {"name": _length(CLAIM_NAME_MAX, 1)}


def _managed_cluster(problems: Problems, obj: Mapping[str, Any]) -> None:
    _taints(problems, obj, OCM_TAINT_CHECKS)
    claims = _entries(problems, _at(obj, "status.clusterClaims"), "status.clusterClaims", MAX_CLAIMS)
    _fields(problems, claims, "status.clusterClaims", CLAIM_CHECKS)


def _member_cluster(problems: Problems, obj: Mapping[str, Any]) -> None:
    _taints(problems, obj, FLEET_TAINT_CHECKS)
    agents = _entries(problems, _at(obj, "status.agentStatus"), "status.agentStatus", MAX_AGENT_STATUSES)
    for index, agent in enumerate(agents):
        _conditions(problems, agent.get("conditions"), f"status.agentStatus[{index}].conditions")
    properties = _at(obj, "status.properties")
    if properties is not None and _typed(problems, properties, "status.properties", dict):
        _too_many(problems, properties, "status.properties", MAX_PROPERTIES)


def _binding(problems: Problems, obj: Mapping[str, Any]) -> None:
    cluster_set = _at(obj, "spec.clusterSet")
    if cluster_set is not None:
        _string(problems, cluster_set, "spec.clusterSet", _optional(dns_subdomain_error))


def _scores(problems: Problems, obj: Mapping[str, Any]) -> None:
    scores = _entries(problems, _at(obj, "status.scores"), "status.scores", MAX_SCORES)
    _fields(problems, scores, "status.scores", SCORE_CHECKS)
    _int32(problems, scores, "status.scores", "value")


def _decisions(problems: Problems, obj: Mapping[str, Any]) -> None:
    decisions = _entries(problems, _at(obj, "status.decisions"), "status.decisions", MAX_DECISIONS)
    _fields(problems, decisions, "status.decisions", {"clusterName": _optional(dns_subdomain_error)})


KIND_CHECKS: dict[str, Callable[[Problems, Mapping[str, Any]], None]] = {
    "ManagedCluster": _managed_cluster,
    "MemberCluster": _member_cluster,
    "ManagedClusterSetBinding": _binding,
    "AddOnPlacementScore": _scores,
    "PlacementDecision": _decisions,
}


def _compact_json(obj: Any) -> bytes:
    """`obj` as compact UTF-8 JSON, the bytes `json.dumps(obj, separators=(",", ":"), ensure_ascii=False)`
    encodes to. orjson writes them about fifteen times faster; what it refuses (an integer beyond 64
    bits, a lone surrogate, a key that is not a string) is written by `json`, which raises on what JSON
    cannot hold."""
    try:
        return orjson.dumps(obj)
    except orjson.JSONEncodeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def problems(kind: str, obj: Any, *, namespaced: bool) -> Problems:
    """Every limit `obj`, an object of `kind` read from a hub, breaks (by field path); empty when it may
    be stored. Field types the limits need are checked too; inventory.objects checks the rest."""
    found: Problems = []
    if not _typed(found, obj, "object", dict):
        return found
    try:
        data = _compact_json(obj)
    except (RecursionError, TypeError, ValueError) as exc:
        return [f"object: cannot be measured: {type(exc).__name__}"]
    if (size := len(data)) > MAX_OBJECT_BYTES:
        return [f"object: {size} bytes, at most {MAX_OBJECT_BYTES} are kept"]
    # the substring test first: the pattern's look-behind makes it slow to scan a whole object
    if b"\\u0000" in data and NUL.search(data.decode()):
        found.append("object: a string holds a NUL character")
    _metadata(found, obj, namespaced)
    _conditions(found, _at(obj, "status.conditions"), "status.conditions")
    if check := KIND_CHECKS.get(kind):
        check(found, obj)
    return found


def reason(found: Problems) -> str:
    """The problems as one readable line: the first MAX_REPORTED of them, and how many more."""
    text = "; ".join(found[:MAX_REPORTED])
    if len(found) > MAX_REPORTED:
        text += f"; and {len(found) - MAX_REPORTED} more"
    return text
