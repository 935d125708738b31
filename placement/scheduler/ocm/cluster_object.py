"""The ManagedCluster as upstream's CEL predicates see it: the stored object, through the Go type.

upstream: the API server decodes a ManagedCluster into the `cluster/v1` Go type (filling the CRD
defaults), and ocm `pkg/placement/helpers` `CELSelector.Validate` turns that typed object back into
unstructured JSON (sdk-go `ConvertObjectToUnstructured`) before binding it to `managedCluster`. The
round trip changes what an expression reads, so a manifest read from a file goes through the same:

- fields the Go type does not declare are gone;
- a field without `omitempty` is always there: `spec.hubAcceptsClient` (false), `status.conditions`
  (null when absent), a taint's `timeAdded` and a condition's `lastTransitionTime` (null when absent),
  a condition's `reason` and `message` (""), a client config's `url` ("");
- a field with `omitempty` is gone when it holds its zero value (`""`, `0`, an empty list or map),
  except a nested struct, which is always there (`status.version` is at least `{}`);
- `spec.leaseDurationSeconds` takes its CRD default, 60, when a `spec` is given without it;
- quantities print as Go's `Quantity.String()` (`4096Mi` reads `4Gi`) and times as RFC 3339 UTC
  seconds (`metav1.Time`).

Objects read from a hub were stored by the API server already and are in this form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from placement.scheduler.quantity import QuantityError, canonical_text
from placement.scheduler.timeutil import format_time, parse_time

# the CRD default of spec.leaseDurationSeconds
DEFAULT_LEASE_DURATION_SECONDS = 60

_OBJECT_META_SCALARS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
_OBJECT_META_COLLECTIONS = ("labels", "annotations", "finalizers", "ownerReferences", "managedFields")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def _time(value: Any) -> str | None:
    """`metav1.Time` as it marshals: RFC 3339 in UTC to the second, null for the zero time."""
    try:
        return format_time(parse_time(value))
    except (TypeError, ValueError):
        return None


def _quantity(value: Any) -> Any:
    try:
        return canonical_text(value)
    except (QuantityError, TypeError):
        # not a quantity: the API server refuses the object, so nothing reads it
        return value


def _set_nonzero(out: dict[str, Any], key: str, value: Any) -> None:
    """An `omitempty` field: written unless it holds its zero value."""
    if value not in (None, "", 0, False, [], {}):
        out[key] = value


def _object_meta(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in _OBJECT_META_SCALARS:
        _set_nonzero(out, key, metadata.get(key))
    _set_nonzero(out, "generation", metadata.get("generation"))
    for key in ("creationTimestamp", "deletionTimestamp"):
        _set_nonzero(out, key, _time(metadata.get(key)))
    # a pointer field: present whenever it is set, zero included
    if metadata.get("deletionGracePeriodSeconds") is not None:
        out["deletionGracePeriodSeconds"] = metadata["deletionGracePeriodSeconds"]
    for key in _OBJECT_META_COLLECTIONS:
        _set_nonzero(out, key, metadata.get(key))
    return out


def _client_config(config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"url": config.get("url") or ""}
    _set_nonzero(out, "caBundle", config.get("caBundle"))
    return out


def _taint(taint: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"key": taint.get("key") or ""}
    _set_nonzero(out, "value", taint.get("value"))
    out["effect"] = taint.get("effect") or ""
    out["timeAdded"] = _time(taint.get("timeAdded"))
    return out


def _spec(spec: Any) -> dict[str, Any]:
    given = _mapping(spec)
    out: dict[str, Any] = {}
    configs = _each(given.get("managedClusterClientConfigs"), _client_config)
    _set_nonzero(out, "managedClusterClientConfigs", configs)
    out["hubAcceptsClient"] = bool(given.get("hubAcceptsClient"))
    lease = given.get("leaseDurationSeconds")
    # structural-schema defaulting fills a field of an object that is there, not of a missing spec
    if lease is None and isinstance(spec, Mapping):
        lease = DEFAULT_LEASE_DURATION_SECONDS
    _set_nonzero(out, "leaseDurationSeconds", lease)
    _set_nonzero(out, "taints", _each(given.get("taints"), _taint))
    return out


def _condition(condition: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": condition.get("type") or "", "status": condition.get("status") or ""}
    _set_nonzero(out, "observedGeneration", condition.get("observedGeneration"))
    out["lastTransitionTime"] = _time(condition.get("lastTransitionTime"))
    out["reason"] = condition.get("reason") or ""
    out["message"] = condition.get("message") or ""
    return out


def _claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _set_nonzero(out, "name", claim.get("name"))
    _set_nonzero(out, "value", claim.get("value"))
    return out


def _status(status: Mapping[str, Any]) -> dict[str, Any]:
    conditions = status.get("conditions")
    out: dict[str, Any] = {
        # no omitempty: a missing list marshals as null, an empty one as []
        "conditions": _each(conditions, _condition) if isinstance(conditions, list) else None,
    }
    for key in ("capacity", "allocatable"):
        _set_nonzero(out, key, {name: _quantity(v) for name, v in _mapping(status.get(key)).items()})
    version: dict[str, Any] = {}
    _set_nonzero(version, "kubernetes", _mapping(status.get("version")).get("kubernetes"))
    out["version"] = version
    _set_nonzero(out, "clusterClaims", _each(status.get("clusterClaims"), _claim))
    return out


def _each(value: Any, convert: Callable[[Mapping[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    return [convert(item) for item in _items(value)]


def typed_cluster_object(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The ManagedCluster manifest `doc` as upstream binds it to `managedCluster` in CEL."""
    out: dict[str, Any] = {}
    _set_nonzero(out, "apiVersion", doc.get("apiVersion"))
    _set_nonzero(out, "kind", doc.get("kind"))
    out["metadata"] = _object_meta(_mapping(doc.get("metadata")))
    out["spec"] = _spec(doc.get("spec"))
    out["status"] = _status(_mapping(doc.get("status")))
    return out
