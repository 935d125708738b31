"""Hub manifests (Kubernetes dicts) to the scheduler's frozen inputs.

`parse_ocm_object` applies the CRD defaults, maps legacy forms the way upstream conversion did, and
raises `ManifestError` for what the API server or its admission webhooks reject. Values upstream accepts
but the scheduler reports as Misconfigured (prioritizer mode "Foo", builtIn "Spread", a config without
scoreCoordinate, toleration key "" with operator Equal, bad clustersPerDecisionGroup, CEL that does not
compile, a label or claim selector with an unknown operator or a malformed key or value) parse fine: the
Misconfigured condition appears at schedule time.
"""

# `_typed` and `_field` take the abstract `Mapping` as the kind of an object field; they only
# isinstance-check against it and never instantiate it, the mistake mypy's type-abstract check guards
# against.
# mypy: disable-error-code="type-abstract"

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

from placement.scheduler.errors import INT64_MAX, INT64_MIN, ManifestError, in_range, json_type
from placement.scheduler.labels import (
    SelectorError,
    parse_stored_label_selector,
    parse_stored_requirements,
)
from placement.scheduler.ocm.cluster_object import typed_cluster_object
from placement.scheduler.ocm.decisions import parse_decision_strategy
from placement.scheduler.ocm.types import (
    ADD_ON,
    ADDITIVE,
    BUILT_IN,
    EQUAL,
    EXCLUSIVE_CLUSTER_SET_LABEL,
    EXISTS,
    GROUP,
    TAINT_EFFECTS,
    AddOnPlacementScore,
    AddOnScoreCoordinate,
    ClusterPredicate,
    ManagedCluster,
    ManagedClusterSet,
    ManagedClusterSetBinding,
    OcmObject,
    Placement,
    PlacementDecision,
    PrioritizerConfig,
    PrioritizerPolicy,
    ScoreCoordinate,
    Taint,
    Toleration,
)
from placement.scheduler.quantity import QuantityError, approx_float
from placement.scheduler.timeutil import ZERO_TIME, parse_time, sub_microsecond_nanos

Warn = Callable[[str], None]
T = TypeVar("T")

VERSIONS = ("v1", "v1beta1", "v1beta2", "v1alpha1")
LEGACY_CLUSTER_SET_LABEL = "LegacyClusterSetLabel"
# the v1alpha1 prioritizer type names used before ScoreCoordinate existed
_LEGACY_ADDON_TYPE = "AddOnScore"
MIN_WEIGHT, MAX_WEIGHT = -10, 10


def parse_ocm_object(doc: Mapping[str, Any], warn: Warn) -> OcmObject:
    """Parse one `cluster.open-cluster-management.io` object; `warn` receives notes on legacy forms."""
    if not isinstance(doc, Mapping):
        raise ManifestError("", "a manifest must be an object")
    group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
    if group != GROUP or version not in VERSIONS:
        raise ManifestError(
            "apiVersion", f"unsupported apiVersion {doc.get('apiVersion')!r} (want {GROUP}/v1…)"
        )
    kind = doc.get("kind")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise ManifestError("kind", f"unsupported kind {kind!r} (want one of {', '.join(_PARSERS)})")
    try:
        return parser(doc, warn)
    except SelectorError as exc:
        raise ManifestError(exc.field, exc.message) from exc


def _typed(value: Any, kind: type[T], path: str, default: T) -> T:
    if value is None:
        return default
    if kind is int and isinstance(value, bool) or not isinstance(value, kind):
        # the apiserver's structural-schema wording
        found = json_type(value)
        raise ManifestError(
            path, f'Invalid value: "{found}": {path} in body must be of type {_TYPE_NAMES[kind]}: "{found}"'
        )
    return value


_TYPE_NAMES: dict[type, str] = {
    str: "string",
    int: "integer",
    list: "array",
    dict: "object",
    Mapping: "object",
}


def _field(obj: Mapping[str, Any], path: str, kind: type[T], default: T) -> T:
    """The value at a dotted `path` of `obj`, type-checked; missing or null gives `default`."""
    current: Any = obj
    for part in path.split("."):
        if current is None:
            return default
        if not isinstance(current, Mapping):
            raise ManifestError(path, "must be an object")
        current = current.get(part)
    return _typed(current, kind, path, default)


def _string_map(value: Any, path: str) -> dict[str, str]:
    mapping = _typed(value, Mapping, path, {})
    for key, item in mapping.items():
        if not isinstance(item, str):
            raise ManifestError(f"{path}.{key}", f"Invalid value: {item!r}: must be of type string")
    return dict(mapping)


# what the controllers' metav1.Time decoding (Go's time.Parse with time.RFC3339) reads; Python's
# fromisoformat alone would also take shapes Go refuses, such as a second fraction after the first
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"
)


def _time(value: Any, path: str) -> datetime | None:
    try:
        if isinstance(value, str) and value and not _RFC3339.fullmatch(value):
            raise ValueError(value)
        return parse_time(value)
    except (TypeError, ValueError) as exc:
        raise ManifestError(path, f"Invalid value: {value!r}: must be an RFC 3339 date-time") from exc


def _metadata(doc: Mapping[str, Any], *, namespaced: bool, warn: Warn) -> tuple[str, str, Mapping[str, Any]]:
    metadata = _field(doc, "metadata", Mapping, {})
    name = _typed(metadata.get("name"), str, "metadata.name", "")
    if not name:
        raise ManifestError("metadata.name", "Required value: name is required")
    namespace = _typed(metadata.get("namespace"), str, "metadata.namespace", "")
    if namespaced and not namespace:
        warn(f'{doc.get("kind")} {name} has no metadata.namespace; using "default" like kubectl')
        namespace = "default"
    return namespace, name, metadata


def parse_managed_cluster(doc: Mapping[str, Any], warn: Warn) -> ManagedCluster:
    """A ManagedCluster: labels, claims, taints, allocatable/capacity, conditions, deletion."""
    _, name, metadata = _metadata(doc, namespaced=False, warn=warn)
    claims = tuple(
        (
            _typed(c.get("name"), str, f"status.clusterClaims[{i}].name", ""),
            _typed(c.get("value"), str, f"status.clusterClaims[{i}].value", ""),
        )
        for i, c in enumerate(
            _checked_items(_field(doc, "status.clusterClaims", list, []), "status.clusterClaims")
        )
    )
    taints = _shared_taints(
        tuple(
            _parse_taint(raw, f"spec.taints[{i}]")
            for i, raw in enumerate(_field(doc, "spec.taints", list, []))
        )
    )
    conditions = tuple(_checked_items(_field(doc, "status.conditions", list, []), "status.conditions"))
    return ManagedCluster(
        name=name,
        labels=_string_map(metadata.get("labels"), "metadata.labels"),
        claims=claims,
        taints=taints,
        allocatable=_resource_list(doc, "status.allocatable"),
        capacity=_resource_list(doc, "status.capacity"),
        conditions=conditions,
        deletion_timestamp=_time(metadata.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        typed_object=typed_cluster_object(doc),
    )


@lru_cache(maxsize=4096)
def _shared_taints(taints: tuple[Taint, ...]) -> tuple[Taint, ...]:
    """The one tuple of these taints that every cluster holding equal taints shares: a fleet's tainted
    clusters mostly hold a few lists of taints, and explaining a run computes one reason per tuple."""
    return taints


def _checked_items(items: list[Any], path: str) -> list[Mapping[str, Any]]:
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ManifestError(f"{path}[{index}]", "must be an object")
    return items


def _parse_taint(raw: Any, path: str) -> Taint:
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    key = _typed(raw.get("key"), str, f"{path}.key", "")
    if not key:
        raise ManifestError(f"{path}.key", "Required value")
    effect = _typed(raw.get("effect"), str, f"{path}.effect", "")
    if effect not in TAINT_EFFECTS:
        raise ManifestError(f"{path}.effect", _unsupported(effect, TAINT_EFFECTS))
    time_added = _time(raw.get("timeAdded"), f"{path}.timeAdded") or ZERO_TIME
    value = _typed(raw.get("value"), str, f"{path}.value", "")
    return Taint(key, effect, value, time_added, sub_microsecond_nanos(raw.get("timeAdded")))


def _unsupported(value: Any, allowed: tuple[str, ...]) -> str:
    quoted = ", ".join(f'"{a}"' for a in allowed)
    return f'Unsupported value: "{value}": supported values: {quoted}'


def _resource_list(doc: Mapping[str, Any], path: str) -> dict[str, str]:
    resources = _field(doc, path, Mapping, {})
    out: dict[str, str] = {}
    for name, value in resources.items():
        text = str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        try:
            approx_float(text)
        except (QuantityError, TypeError) as exc:
            raise ManifestError(f"{path}.{name}", f"Invalid value: {value!r}: not a quantity") from exc
        out[name] = text
    return out


def parse_managed_cluster_set(doc: Mapping[str, Any], warn: Warn) -> ManagedClusterSet:
    """A ManagedClusterSet; v1beta1's `LegacyClusterSetLabel` is read as `ExclusiveClusterSetLabel`.

    In v1beta2 that name is kept, so scheduling errors on it as upstream does.
    """
    _, name, _ = _metadata(doc, namespaced=False, warn=warn)
    selector = _field(doc, "spec.clusterSelector", Mapping, {})
    # upstream CRD default
    selector_type = _typed(selector.get("selectorType"), str, "spec.clusterSelector.selectorType", "")
    selector_type = selector_type or EXCLUSIVE_CLUSTER_SET_LABEL
    # upstream's v1beta1 -> v1beta2 conversion renamed it; v1beta2 code rejects the old name
    if selector_type == LEGACY_CLUSTER_SET_LABEL and str(doc.get("apiVersion")).endswith("/v1beta1"):
        warn(
            f"ManagedClusterSet {name}: selectorType {LEGACY_CLUSTER_SET_LABEL} "
            f"read as {EXCLUSIVE_CLUSTER_SET_LABEL}"
        )
        selector_type = EXCLUSIVE_CLUSTER_SET_LABEL
    raw_selector = selector.get("labelSelector")
    label_selector, problem = parse_stored_label_selector(raw_selector, "spec.clusterSelector.labelSelector")
    # a missing labelSelector selects nothing, unlike an empty one
    return ManagedClusterSet(name, selector_type, None if raw_selector is None else label_selector, problem)


def parse_managed_cluster_set_binding(doc: Mapping[str, Any], warn: Warn) -> ManagedClusterSetBinding:
    """A ManagedClusterSetBinding; the upstream webhook requires its name to equal spec.clusterSet."""
    namespace, name, _ = _metadata(doc, namespaced=True, warn=warn)
    cluster_set = _field(doc, "spec.clusterSet", str, "")
    if not cluster_set:
        raise ManifestError("spec.clusterSet", "Required value")
    if cluster_set != name:
        raise ManifestError(
            "spec.clusterSet",
            f'Invalid value: "{cluster_set}": the name of the ManagedClusterSetBinding must match the '
            f'ManagedClusterSet it binds ("{name}")',
        )
    return ManagedClusterSetBinding(namespace, name, cluster_set)


def parse_add_on_placement_score(doc: Mapping[str, Any], warn: Warn) -> AddOnPlacementScore:
    """An AddOnPlacementScore (namespace = cluster name, name = resourceName)."""
    namespace, name, _ = _metadata(doc, namespaced=True, warn=warn)
    scores = []
    for index, item in enumerate(_field(doc, "status.scores", list, [])):
        path = f"status.scores[{index}]"
        if not isinstance(item, Mapping):
            raise ManifestError(path, "must be an object")
        scores.append(
            (
                _typed(item.get("name"), str, f"{path}.name", ""),
                in_range(_typed(item.get("value"), int, f"{path}.value", 0), f"{path}.value"),
            )
        )
    valid_until = _time(_field(doc, "status.validUntil", str, None), "status.validUntil")
    return AddOnPlacementScore(namespace, name, tuple(scores), valid_until)


def parse_placement_decision(doc: Mapping[str, Any], warn: Warn) -> PlacementDecision:
    """A PlacementDecision: labels and `status.decisions[].clusterName`."""
    namespace, name, metadata = _metadata(doc, namespaced=True, warn=warn)
    decisions = _checked_items(_field(doc, "status.decisions", list, []), "status.decisions")
    cluster_names = tuple(
        _typed(d.get("clusterName"), str, f"status.decisions[{i}].clusterName", "")
        for i, d in enumerate(decisions)
    )
    return PlacementDecision(
        namespace, name, _string_map(metadata.get("labels"), "metadata.labels"), cluster_names
    )


def parse_placement(doc: Mapping[str, Any], warn: Warn) -> Placement:
    """A Placement with CRD defaults applied and v1alpha1-era prioritizer configs mapped."""
    namespace, name, metadata = _metadata(doc, namespaced=True, warn=warn)
    spec = dict(_field(doc, "spec", Mapping, {}))
    cluster_sets = _field(doc, "spec.clusterSets", list, [])
    for index, item in enumerate(cluster_sets):
        _typed(item, str, f"spec.clusterSets[{index}]", "")
    number = _field(doc, "spec.numberOfClusters", int, None)
    if number is not None:
        in_range(number, "spec.numberOfClusters", minimum=0)
    policy, spec_policy = _parse_prioritizer_policy(spec.get("prioritizerPolicy"), warn)
    if spec_policy is not None:
        spec["prioritizerPolicy"] = spec_policy
    return Placement(
        namespace=namespace,
        name=name,
        annotations=_string_map(metadata.get("annotations"), "metadata.annotations"),
        deletion_timestamp=_time(metadata.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        cluster_sets=tuple(cluster_sets),
        number_of_clusters=number,
        predicates=_parse_predicates(_field(doc, "spec.predicates", list, [])),
        prioritizer_policy=policy,
        tolerations=_parse_tolerations(_field(doc, "spec.tolerations", list, [])),
        decision_strategy=parse_decision_strategy(spec.get("decisionStrategy"), "spec.decisionStrategy"),
        spread_policy=_spread_policy(doc),
        spec=spec,
    )


def _parse_predicates(raw: list[Any]) -> tuple[ClusterPredicate, ...]:
    predicates = []
    for index, item in enumerate(raw):
        path = f"spec.predicates[{index}].requiredClusterSelector"
        if not isinstance(item, Mapping):
            raise ManifestError(f"spec.predicates[{index}]", "must be an object")
        selector = _typed(item.get("requiredClusterSelector"), Mapping, path, {})
        claims = _typed(selector.get("claimSelector"), Mapping, f"{path}.claimSelector", {})
        cel = _typed(selector.get("celSelector"), Mapping, f"{path}.celSelector", {})
        expressions = _typed(cel.get("celExpressions"), list, f"{path}.celSelector.celExpressions", [])
        for position, expression in enumerate(expressions):
            _typed(expression, str, f"{path}.celSelector.celExpressions[{position}]", "")
        labels, label_problem = parse_stored_label_selector(
            selector.get("labelSelector"), f"{path}.labelSelector"
        )
        claim_requirements, claim_problem = parse_stored_requirements(
            claims.get("matchExpressions"), f"{path}.claimSelector"
        )
        predicates.append(
            ClusterPredicate(
                label_selector=labels,
                claim_selector=claim_requirements,
                cel_expressions=tuple(expressions),
                selector_problem=label_problem or claim_problem,
            )
        )
    return tuple(predicates)


def _parse_prioritizer_policy(raw: Any, warn: Warn) -> tuple[PrioritizerPolicy, dict[str, Any] | None]:
    """The policy, plus the spec form rewritten when legacy configs were mapped (else None)."""
    policy = _typed(raw, Mapping, "spec.prioritizerPolicy", {})
    # the CRD defaults mode to Additive; "" is also read as Additive by the scheduler
    mode = _typed(policy.get("mode"), str, "spec.prioritizerPolicy.mode", ADDITIVE)
    configurations = []
    rewritten = []
    for index, item in enumerate(
        _typed(policy.get("configurations"), list, "spec.prioritizerPolicy.configurations", [])
    ):
        config, spec_form = _parse_prioritizer_config(
            item, f"spec.prioritizerPolicy.configurations[{index}]", warn
        )
        configurations.append(config)
        rewritten.append(spec_form)
    changed = any(
        spec_form is not item
        for spec_form, item in zip(rewritten, policy.get("configurations") or [], strict=False)
    )
    spec_policy = {**policy, "configurations": rewritten} if changed else None
    return PrioritizerPolicy(mode, tuple(configurations)), spec_policy


def _parse_prioritizer_config(raw: Any, path: str, warn: Warn) -> tuple[PrioritizerConfig, Any]:
    if not isinstance(raw, Mapping):
        raise ManifestError(path, "must be an object")
    weight = in_range(
        _typed(raw.get("weight"), int, f"{path}.weight", 1), f"{path}.weight", MIN_WEIGHT, MAX_WEIGHT
    )
    raw_coordinate = _typed(raw.get("scoreCoordinate"), Mapping, f"{path}.scoreCoordinate", None)
    if raw_coordinate is None and raw.get("name"):
        raw_coordinate = _legacy_coordinate(raw, path, warn)
        spec_form: Any = {"scoreCoordinate": raw_coordinate, "weight": weight}
    else:
        spec_form = raw
    coordinate = (
        None if raw_coordinate is None else _parse_score_coordinate(raw_coordinate, f"{path}.scoreCoordinate")
    )
    return PrioritizerConfig(coordinate, weight), spec_form


def _legacy_coordinate(raw: Mapping[str, Any], path: str, warn: Warn) -> dict[str, Any]:
    """v1alpha1 configs named the prioritizer in `name` (and, earliest, add-on scores by type AddOnScore)."""
    name = _typed(raw.get("name"), str, f"{path}.name", "")
    if raw.get("type") == _LEGACY_ADDON_TYPE:
        resource = _typed(raw.get("scoreResourceName"), str, f"{path}.scoreResourceName", "")
        score = _typed(raw.get("scoreName"), str, f"{path}.scoreName", "")
        warn(f"{path}: legacy AddOnScore config mapped to scoreCoordinate AddOn {resource}/{score}")
        return {"type": ADD_ON, "addOn": {"resourceName": resource, "scoreName": score}}
    warn(f"{path}: legacy field name={name!r} mapped to scoreCoordinate {{type: BuiltIn, builtIn: {name}}}")
    return {"type": BUILT_IN, "builtIn": name}


def _parse_score_coordinate(raw: Mapping[str, Any], path: str) -> ScoreCoordinate:
    kind = _typed(raw.get("type"), str, f"{path}.type", "") or BUILT_IN
    if kind not in (BUILT_IN, ADD_ON):
        raise ManifestError(f"{path}.type", _unsupported(kind, (BUILT_IN, ADD_ON)))
    built_in = _typed(raw.get("builtIn"), str, f"{path}.builtIn", "")
    raw_add_on = _typed(raw.get("addOn"), Mapping, f"{path}.addOn", None)
    add_on = None
    if raw_add_on is not None:
        resource = _typed(raw_add_on.get("resourceName"), str, f"{path}.addOn.resourceName", "")
        score = _typed(raw_add_on.get("scoreName"), str, f"{path}.addOn.scoreName", "")
        for field_name, value in (("resourceName", resource), ("scoreName", score)):
            if not value:
                raise ManifestError(f"{path}.addOn.{field_name}", "Required value")
        add_on = AddOnScoreCoordinate(resource, score)
    return ScoreCoordinate(kind, built_in, add_on)


def _parse_tolerations(raw: list[Any]) -> tuple[Toleration, ...]:
    tolerations = []
    for index, item in enumerate(raw):
        path = f"spec.tolerations[{index}]"
        if not isinstance(item, Mapping):
            raise ManifestError(path, "must be an object")
        # the CRD defaults operator to Equal
        operator = _typed(item.get("operator"), str, f"{path}.operator", "") or EQUAL
        if operator not in (EQUAL, EXISTS):
            raise ManifestError(f"{path}.operator", _unsupported(operator, (EXISTS, EQUAL)))
        effect = _typed(item.get("effect"), str, f"{path}.effect", "")
        if effect and effect not in TAINT_EFFECTS:
            raise ManifestError(f"{path}.effect", _unsupported(effect, TAINT_EFFECTS))
        tolerations.append(
            Toleration(
                key=_typed(item.get("key"), str, f"{path}.key", ""),
                operator=operator,
                value=_typed(item.get("value"), str, f"{path}.value", ""),
                effect=effect,
                toleration_seconds=_toleration_seconds(
                    item.get("tolerationSeconds"), f"{path}.tolerationSeconds"
                ),
            )
        )
    return tuple(tolerations)


def _toleration_seconds(raw: Any, path: str) -> int | None:
    """Any int64, as the CRD (format int64) admits; how upstream's Duration arithmetic reads a value past
    about 292 years is `Toleration.duration`'s concern."""
    seconds = _typed(raw, int, path, None)
    return None if seconds is None else in_range(seconds, path, INT64_MIN, INT64_MAX)


def _spread_policy(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`spec.spreadPolicy` as given, once its maxSkews are in the CRD's range (1 up to an int32)."""
    policy = _field(doc, "spec.spreadPolicy", Mapping, None)
    path = "spec.spreadPolicy.spreadConstraints"
    for index, constraint in enumerate(_field(doc, path, list, [])):
        where = f"{path}[{index}]"
        if not isinstance(constraint, Mapping):
            raise ManifestError(where, "must be an object")
        max_skew = _typed(constraint.get("maxSkew"), int, f"{where}.maxSkew", 1)
        in_range(max_skew, f"{where}.maxSkew", minimum=1)
    return policy


_PARSERS: dict[str, Callable[[Mapping[str, Any], Warn], OcmObject]] = {
    "ManagedCluster": parse_managed_cluster,
    "ManagedClusterSet": parse_managed_cluster_set,
    "ManagedClusterSetBinding": parse_managed_cluster_set_binding,
    "Placement": parse_placement,
    "PlacementDecision": parse_placement_decision,
    "AddOnPlacementScore": parse_add_on_placement_score,
}
