"""KubeFleet manifests (YAML/JSON objects) to scheduler inputs, validated like the API server would.

`parse_fleet_object` accepts MemberCluster (`cluster.kubernetes-fleet.io` v1beta1/v1) and
ClusterResourcePlacement / ClusterResourceBinding (`placement.kubernetes-fleet.io` v1beta1/v1). What the
CRD schema or the validating webhook rejects raises `ManifestError(field, message)` with the JSON path;
`SetPlacementDefaults` is applied to what is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from placement.scheduler.errors import ManifestError
from placement.scheduler.fleet.properties import CAPACITY_TYPES, RESOURCE_PROPERTY_PREFIX
from placement.scheduler.fleet.types import (
    ASCENDING,
    BINDING_STATES,
    CRP_TRACKING_LABEL,
    DEFAULT_APPLY_STRATEGY,
    DEFAULT_REVISION_HISTORY_LIMIT,
    DESCENDING,
    DO_NOT_SCHEDULE,
    EXTERNAL,
    NO_SCHEDULE,
    PICK_ALL,
    PICK_FIXED,
    PICK_N,
    PLACEMENT_TYPES,
    PREVIOUS_BINDING_STATE_ANNOTATION,
    PROPERTY_OPERATORS,
    ROLLING_UPDATE,
    SCHEDULE_ANYWAY,
    TOLERATION_EQUAL,
    TOLERATION_EXISTS,
    AgentCondition,
    AgentStatus,
    ClusterAffinity,
    ClusterDecision,
    ClusterResourceBinding,
    ClusterResourcePlacement,
    ClusterScore,
    ClusterSelectorTerm,
    MemberCluster,
    PlacementPolicy,
    PreferredClusterSelector,
    PropertySelectorRequirement,
    PropertySorter,
    PropertyValue,
    RollingUpdateConfig,
    RolloutStrategy,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from placement.scheduler.intstr import IntOrStringError, scaled_value
from placement.scheduler.labels import (
    LabelSelector,
    SelectorError,
    label_value_error,
    parse_label_selector,
    qualified_name_error,
)
from placement.scheduler.quantity import QuantityError, parse_quantity
from placement.scheduler.timeutil import parse_time

FleetObject = MemberCluster | ClusterResourcePlacement | ClusterResourceBinding
Warn = Callable[[str], None]

CLUSTER_GROUP = "cluster.kubernetes-fleet.io"
PLACEMENT_GROUP = "placement.kubernetes-fleet.io"
VERSIONS = ("v1beta1", "v1")
MAX_NAME_LENGTH = 63  # DNS-1035 label length limit the webhook applies to the CRP name
MAX_CLUSTER_NAMES = 100
MAX_TOLERATIONS = 100
MAX_SELECTOR_TERMS = 10
MAX_RESOURCE_SELECTORS = 100
_INT_OR_PERCENT_PATTERN = "^((100|[0-9]{1,2})%|[0-9]+)$"
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

# --- small typed readers ---------------------------------------------------------------------------


def _mapping(raw: Any, path: str, *, required: bool = False) -> Mapping[str, Any]:
    if raw is None:
        if required:
            raise ManifestError(path, "Required value")
        return {}
    if not isinstance(raw, Mapping):
        raise ManifestError(path, f"Invalid value: {type(raw).__name__}: must be an object")
    return raw


def _list(raw: Any, path: str, *, max_items: int | None = None) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ManifestError(path, f"Invalid value: {type(raw).__name__}: must be an array")
    if max_items is not None and len(raw) > max_items:
        raise ManifestError(path, f"Too many: {len(raw)}: must have at most {max_items} items")
    return raw


def _string(raw: Any, path: str, *, required: bool = False, default: str = "") -> str:
    if raw is None or (required and raw == ""):
        if required:
            raise ManifestError(path, "Required value")
        return default
    if not isinstance(raw, str):
        raise ManifestError(path, f"Invalid value: {raw!r}: must be a string")
    return raw


def _integer(raw: Any, path: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ManifestError(path, f"Invalid value: {raw!r}: must be an integer")
    return raw


def _enum(raw: Any, path: str, allowed: tuple[str, ...], default: str) -> str:
    value = _string(raw, path, default=default)
    if value not in allowed:
        quoted = ", ".join(f'"{a}"' for a in allowed)
        raise ManifestError(path, f'Unsupported value: "{value}": supported values: {quoted}')
    return value


def _string_map(raw: Any, path: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for key, value in _mapping(raw, path).items():
        result[str(key)] = _string(value, f"{path}.{key}")
    return result


def _quantity_text(raw: Any, path: str) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise ManifestError(path, f"Invalid value: {raw!r}: must be a quantity")
    text = str(raw)
    try:
        parse_quantity(text)
    except QuantityError as exc:
        raise ManifestError(path, str(exc)) from exc
    return text


def _time(raw: Any, path: str) -> Any:
    try:
        return parse_time(raw)
    except (TypeError, ValueError) as exc:
        raise ManifestError(path, str(exc)) from exc


def _selector(raw: Any, path: str) -> LabelSelector | None:
    if raw is None:
        return None
    try:
        return parse_label_selector(raw, path)
    except SelectorError as exc:
        raise ManifestError(exc.field, exc.message) from exc


def _check_api_version(doc: Mapping[str, Any], group: str) -> None:
    api_version = _string(doc.get("apiVersion"), "apiVersion", required=True)
    found_group, _, version = api_version.rpartition("/")
    if found_group != group or version not in VERSIONS:
        raise ManifestError("apiVersion", f"unsupported apiVersion {api_version!r} for {doc.get('kind')}")


def _metadata(doc: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    metadata = _mapping(doc.get("metadata"), "metadata", required=True)
    return metadata, _string(metadata.get("name"), "metadata.name", required=True)


# --- MemberCluster ---------------------------------------------------------------------------------


def _taint(raw: Any, path: str) -> Taint:
    entry = _mapping(raw, path)
    key = _string(entry.get("key"), f"{path}.key", required=True)
    if (why := qualified_name_error(key)) is not None:
        raise ManifestError(f"{path}.key", f"Invalid value: {key!r}: {why}")
    value = _string(entry.get("value"), f"{path}.value")
    if (why := label_value_error(value)) is not None:
        raise ManifestError(f"{path}.value", f"Invalid value: {value!r}: {why}")
    effect = _enum(entry.get("effect"), f"{path}.effect", (NO_SCHEDULE,), "")
    return Taint(key, value, effect)


def _agent_status(raw: Any, path: str) -> AgentStatus:
    entry = _mapping(raw, path)
    conditions = []
    for index, item in enumerate(_list(entry.get("conditions"), f"{path}.conditions")):
        where = f"{path}.conditions[{index}]"
        condition = _mapping(item, where)
        conditions.append(
            AgentCondition(
                type=_string(condition.get("type"), f"{where}.type", required=True),
                status=_string(condition.get("status"), f"{where}.status", required=True),
                last_transition_time=_time(
                    condition.get("lastTransitionTime"), f"{where}.lastTransitionTime"
                ),
                reason=_string(condition.get("reason"), f"{where}.reason"),
                message=_string(condition.get("message"), f"{where}.message"),
            )
        )
    return AgentStatus(
        type=_string(entry.get("type"), f"{path}.type", required=True),
        conditions=tuple(conditions),
        last_received_heartbeat=_time(entry.get("lastReceivedHeartbeat"), f"{path}.lastReceivedHeartbeat"),
    )


def parse_member_cluster(doc: Mapping[str, Any]) -> MemberCluster:
    """A MemberCluster manifest to a `MemberCluster`."""
    metadata, name = _metadata(doc)
    spec = _mapping(doc.get("spec"), "spec")
    status = _mapping(doc.get("status"), "status")
    properties = {}
    for key, raw in _mapping(status.get("properties"), "status.properties").items():
        where = f"status.properties.{key}"
        entry = _mapping(raw, where)
        properties[str(key)] = PropertyValue(
            value=_string(entry.get("value"), f"{where}.value", required=True),
            observation_time=_time(entry.get("observationTime"), f"{where}.observationTime"),
        )
    usage = _mapping(status.get("resourceUsage"), "status.resourceUsage")
    resources = {
        kind: {
            str(k): _quantity_text(v, f"status.resourceUsage.{kind}.{k}")
            for k, v in _mapping(usage.get(kind), f"status.resourceUsage.{kind}").items()
        }
        for kind in ("capacity", "allocatable", "available")
    }
    return MemberCluster(
        name=name,
        labels=_string_map(metadata.get("labels"), "metadata.labels"),
        taints=tuple(
            _taint(t, f"spec.taints[{i}]") for i, t in enumerate(_list(spec.get("taints"), "spec.taints"))
        ),
        properties=properties,
        capacity=resources["capacity"],
        allocatable=resources["allocatable"],
        available=resources["available"],
        agent_status=tuple(
            _agent_status(a, f"status.agentStatus[{i}]")
            for i, a in enumerate(_list(status.get("agentStatus"), "status.agentStatus"))
        ),
        deletion_timestamp=_time(metadata.get("deletionTimestamp"), "metadata.deletionTimestamp"),
    )


# --- property selectors and sorters ----------------------------------------------------------------


def property_name_error(name: str) -> str | None:
    """Why the webhook rejects a property name, or None."""
    if name.startswith(RESOURCE_PROPERTY_PREFIX):
        capacity_type, dash, resource = name[len(RESOURCE_PROPERTY_PREFIX) :].partition("-")
        if not dash or not capacity_type or not resource:
            return (
                f"invalid resource property name {name}, expected format is "
                "[PREFIX]/[CAPACITY_TYPE]-[RESOURCE_NAME]"
            )
        if capacity_type not in CAPACITY_TYPES:
            return (
                f"invalid capacity type in resource property name {name}, "
                f"supported values are [{' '.join(sorted(CAPACITY_TYPES))}]"
            )
        return None
    segments = name.split("/")
    if len(segments) > 1 and not _DNS_SUBDOMAIN.match(segments[0]) and qualified_name_error(segments[0]):
        return f"property name first segment {segments[0]} is not valid"
    for segment in segments[1:] if len(segments) > 1 else segments:
        if (why := qualified_name_error(segment)) is not None:
            return f"property name segment {segment} is not valid: {why}"
    return None


def _requirement(raw: Any, path: str) -> PropertySelectorRequirement:
    entry = _mapping(raw, path)
    name = _string(entry.get("name"), f"{path}.name", required=True)
    if (why := property_name_error(name)) is not None:
        raise ManifestError(f"{path}.name", why)
    operator = _enum(entry.get("operator"), f"{path}.operator", PROPERTY_OPERATORS, "")
    values = tuple(
        _string(v, f"{path}.values[{i}]") for i, v in enumerate(_list(entry.get("values"), f"{path}.values"))
    )
    if len(values) != 1:
        raise ManifestError(
            f"{path}.values", f"operator {operator} requires exactly one value, got {len(values)}"
        )
    for index, value in enumerate(values):
        try:
            parse_quantity(value)
        except QuantityError as exc:
            raise ManifestError(
                f"{path}.values[{index}]", f"value {value} is not a valid resource.Quantity: {exc}"
            ) from exc
    return PropertySelectorRequirement(name, operator, values)


def _contradiction(requirements: list[PropertySelectorRequirement]) -> str | None:
    """Why requirements on one property can never hold together, or None."""
    equal: set[Fraction] = set()
    not_equal: set[Fraction] = set()
    lower: tuple[Fraction, bool] | None = None  # (bound, strict)
    upper: tuple[Fraction, bool] | None = None
    for requirement in requirements:
        value = parse_quantity(requirement.values[0])
        if requirement.operator == "Eq":
            equal.add(value)
        elif requirement.operator == "Ne":
            not_equal.add(value)
        elif requirement.operator in ("Gt", "Ge"):
            strict = requirement.operator == "Gt"
            if lower is None or value > lower[0] or (value == lower[0] and strict):
                lower = (value, strict)
        elif upper is None or value < upper[0] or (value == upper[0] and requirement.operator == "Lt"):
            upper = (value, requirement.operator == "Lt")
    if len(equal) > 1:
        return "two Eq requirements with different values"
    if equal & not_equal:
        return "an Eq and a Ne requirement with the same value"
    if lower and upper and (lower[0] > upper[0] or (lower[0] == upper[0] and (lower[1] or upper[1]))):
        return "the Gt/Ge and Lt/Le requirements leave an empty interval"
    for value in equal:
        if lower and (value < lower[0] or (value == lower[0] and lower[1])):
            return "the Eq value is outside the bounds set by the other requirements"
        if upper and (value > upper[0] or (value == upper[0] and upper[1])):
            return "the Eq value is outside the bounds set by the other requirements"
    return None


def _property_selector(raw: Any, path: str) -> tuple[PropertySelectorRequirement, ...]:
    selector = _mapping(raw, path)
    where = f"{path}.matchExpressions"
    requirements = [
        _requirement(r, f"{where}[{i}]") for i, r in enumerate(_list(selector.get("matchExpressions"), where))
    ]
    by_name: dict[str, list[PropertySelectorRequirement]] = {}
    for requirement in requirements:
        by_name.setdefault(requirement.name, []).append(requirement)
    for name, group in by_name.items():
        if (why := _contradiction(group)) is not None:
            raise ManifestError(where, f"requirements on property {name} contradict each other: {why}")
    return tuple(requirements)


def _sorter(entry: Mapping[str, Any], path: str, warn: Warn) -> PropertySorter | None:
    raw = entry.get("propertySorter")
    key = "propertySorter"
    if raw is None and entry.get("metricSorter") is not None:
        warn(f"{path}.metricSorter is not a KubeFleet field; read as propertySorter")
        raw, key = entry["metricSorter"], "metricSorter"
    if raw is None:
        return None
    sorter = _mapping(raw, f"{path}.{key}")
    name = _string(sorter.get("name"), f"{path}.{key}.name", required=True)
    if (why := property_name_error(name)) is not None:
        raise ManifestError(f"{path}.{key}.name", why)
    order = _string(sorter.get("sortOrder"), f"{path}.{key}.sortOrder", required=True)
    if order not in (DESCENDING, ASCENDING):
        raise ManifestError(f"{path}.{key}.sortOrder", f"invalid property sort order {order}")
    return PropertySorter(name, order)


def _term(raw: Any, path: str, warn: Warn) -> tuple[ClusterSelectorTerm, Mapping[str, Any]]:
    entry = _mapping(raw, path)
    term = ClusterSelectorTerm(
        label_selector=_selector(entry.get("labelSelector"), f"{path}.labelSelector"),
        property_selector=_property_selector(entry.get("propertySelector"), f"{path}.propertySelector"),
        property_sorter=_sorter(entry, path, warn),
    )
    return term, entry


def _cluster_affinity(raw: Any, path: str, placement_type: str, warn: Warn) -> ClusterAffinity:
    affinity = _mapping(raw, path)
    required_terms = None
    required_path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    if affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is not None:
        required = _mapping(affinity["requiredDuringSchedulingIgnoredDuringExecution"], required_path)
        terms_path = f"{required_path}.clusterSelectorTerms"
        terms = []
        for index, item in enumerate(
            _list(required.get("clusterSelectorTerms"), terms_path, max_items=MAX_SELECTOR_TERMS)
        ):
            term, _ = _term(item, f"{terms_path}[{index}]", warn)
            if term.property_sorter is not None:
                raise ManifestError(
                    f"{terms_path}[{index}].propertySorter",
                    "PropertySorter is not allowed for RequiredDuringSchedulingIgnoredDuringExecution "
                    "affinity",
                )
            terms.append(term)
        required_terms = tuple(terms)
    preferred_path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    preferred_raw = _list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), preferred_path)
    if preferred_raw and placement_type == PICK_ALL:
        # upstream webhook rejects them (the API comment says "ignored")
        raise ManifestError(
            preferred_path,
            "PreferredDuringSchedulingIgnoredDuringExecution will be ignored for placement policy type "
            f"{PICK_ALL}",
        )
    preferred = []
    for index, item in enumerate(preferred_raw):
        where = f"{preferred_path}[{index}]"
        entry = _mapping(item, where)
        if "weight" not in entry:
            raise ManifestError(f"{where}.weight", "Required value")
        weight = _integer(entry["weight"], f"{where}.weight")
        if not -100 <= weight <= 100:
            raise ManifestError(f"{where}.weight", f"Invalid value: {weight}: must be between -100 and 100")
        term, term_raw = _term(entry.get("preference"), f"{where}.preference", warn)
        if term_raw.get("propertySelector") is not None:
            raise ManifestError(
                f"{where}.preference.propertySelector",
                "PropertySelector is not allowed for PreferredDuringSchedulingIgnoredDuringExecution "
                "affinity",
            )
        preferred.append(PreferredClusterSelector(weight, term))
    return ClusterAffinity(required_terms, tuple(preferred))


def _toleration(raw: Any, path: str) -> Toleration:
    entry = _mapping(raw, path)
    toleration = Toleration(
        key=_string(entry.get("key"), f"{path}.key"),
        operator=_enum(
            entry.get("operator"), f"{path}.operator", (TOLERATION_EQUAL, TOLERATION_EXISTS), TOLERATION_EQUAL
        ),
        value=_string(entry.get("value"), f"{path}.value"),
        effect=_enum(entry.get("effect"), f"{path}.effect", ("", NO_SCHEDULE), ""),
    )
    shown = (
        f"{{Key:{toleration.key} Operator:{toleration.operator} "
        f"Value:{toleration.value} Effect:{toleration.effect}}}"
    )
    if toleration.key and (why := qualified_name_error(toleration.key)) is not None:
        raise ManifestError(f"{path}.key", f"invalid toleration key {shown}: {why}")
    if toleration.operator == TOLERATION_EXISTS and toleration.value:
        raise ManifestError(
            f"{path}.value",
            f"invalid toleration {shown}: toleration value needs to be empty, when operator is Exists",
        )
    if toleration.operator == TOLERATION_EQUAL:
        if not toleration.key:
            raise ManifestError(
                f"{path}.key",
                f"invalid toleration {shown}: toleration key cannot be empty, when operator is Equal",
            )
        if (why := label_value_error(toleration.value)) is not None:
            raise ManifestError(f"{path}.value", f"invalid toleration value {shown}: {why}")
    return toleration


def _tolerations(raw: Any, path: str) -> tuple[Toleration, ...]:
    tolerations: list[Toleration] = []
    for index, item in enumerate(_list(raw, path, max_items=MAX_TOLERATIONS)):
        toleration = _toleration(item, f"{path}[{index}]")
        if toleration in tolerations:
            raise ManifestError(f"{path}[{index}]", "toleration already exists, tolerations must be unique")
        tolerations.append(toleration)
    return tuple(tolerations)


def _topology_constraint(raw: Any, path: str) -> TopologySpreadConstraint:
    entry = _mapping(raw, path)
    key = _string(entry.get("topologyKey"), f"{path}.topologyKey", required=True)
    if (why := qualified_name_error(key)) is not None:
        raise ManifestError(f"{path}.topologyKey", f"Invalid value: {key!r}: {why}")
    max_skew = 1 if entry.get("maxSkew") is None else _integer(entry["maxSkew"], f"{path}.maxSkew")
    if max_skew < 1:
        raise ManifestError(
            f"{path}.maxSkew", f"Invalid value: {max_skew}: should be greater than or equal to 1"
        )
    when = _enum(
        entry.get("whenUnsatisfiable"),
        f"{path}.whenUnsatisfiable",
        (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY),
        DO_NOT_SCHEDULE,
    )
    return TopologySpreadConstraint(key, max_skew, when)


def _cluster_names(raw: Any, path: str) -> tuple[str, ...]:
    names: list[str] = []
    for index, item in enumerate(_list(raw, path, max_items=MAX_CLUSTER_NAMES)):
        name = _string(item, f"{path}[{index}]")
        if not _DNS_SUBDOMAIN.match(name) or len(name) > MAX_NAME_LENGTH:
            raise ManifestError(
                f"{path}[{index}]", f"PickFixed cluster name {name} is not a valid member name"
            )
        if name in names:
            raise ManifestError(path, f"cluster names must be unique for policy type {PICK_FIXED}")
        names.append(name)
    return tuple(names)


def _policy(raw: Any, warn: Warn) -> PlacementPolicy:
    if raw is None:
        return PlacementPolicy()
    policy = _mapping(raw, "spec.policy")
    placement_type = _enum(
        policy.get("placementType"), "spec.policy.placementType", PLACEMENT_TYPES, PICK_ALL
    )
    names = _cluster_names(policy.get("clusterNames"), "spec.policy.clusterNames")
    if placement_type == PICK_FIXED and not names:
        raise ManifestError(
            "spec.policy.clusterNames", f"cluster names cannot be empty for policy type {PICK_FIXED}"
        )
    if placement_type != PICK_FIXED and names:
        raise ManifestError(
            "spec.policy.clusterNames",
            f"cluster names needs to be empty for policy type {placement_type}, "
            "only valid for PickFixed policy type",
        )
    number = policy.get("numberOfClusters")
    if placement_type == PICK_N:
        if number is None:
            raise ManifestError(
                "spec.policy.numberOfClusters", f"number of cluster cannot be nil for policy type {PICK_N}"
            )
        number = _integer(number, "spec.policy.numberOfClusters")
        if number < 0:
            raise ManifestError(
                "spec.policy.numberOfClusters",
                f"number of clusters cannot be {number} for policy type {PICK_N}",
            )
    elif number is not None:
        raise ManifestError(
            "spec.policy.numberOfClusters",
            f"number of clusters must be nil for policy type {placement_type}, "
            "only valid for PickN placement policy type",
        )
    affinity_raw = _mapping(policy.get("affinity"), "spec.policy.affinity")
    if placement_type == PICK_FIXED and policy.get("affinity") is not None:
        raise ManifestError(
            "spec.policy.affinity",
            f"affinity must be nil for policy type {PICK_FIXED}, "
            "only valid for PickAll/PickN placement policy types",
        )
    affinity = None
    if affinity_raw.get("clusterAffinity") is not None:
        affinity = _cluster_affinity(
            affinity_raw["clusterAffinity"], "spec.policy.affinity.clusterAffinity", placement_type, warn
        )
    constraints_raw = _list(policy.get("topologySpreadConstraints"), "spec.policy.topologySpreadConstraints")
    if constraints_raw and placement_type != PICK_N:
        raise ManifestError(
            "spec.policy.topologySpreadConstraints",
            f"topology spread constraints needs to be empty for policy type {placement_type}, "
            "only valid for PickN policy type",
        )
    if placement_type == PICK_FIXED and policy.get("tolerations") is not None:
        raise ManifestError(
            "spec.policy.tolerations",
            f"tolerations needs to be empty for policy type {PICK_FIXED}, only valid for PickAll/PickN",
        )
    return PlacementPolicy(
        placement_type=placement_type,
        cluster_names=names,
        number_of_clusters=number,
        affinity=affinity,
        topology_spread_constraints=tuple(
            _topology_constraint(c, f"spec.policy.topologySpreadConstraints[{i}]")
            for i, c in enumerate(constraints_raw)
        ),
        tolerations=_tolerations(policy.get("tolerations"), "spec.policy.tolerations"),
    )


def _int_or_percent(raw: Any, path: str, default: str) -> int | str:
    if raw is None:
        return default
    if isinstance(raw, str):
        if not re.match(_INT_OR_PERCENT_PATTERN, raw):
            raise ManifestError(
                path, f"Invalid value: \"{raw}\": {path} in body should match '{_INT_OR_PERCENT_PATTERN}'"
            )
        try:
            scaled_value(raw if raw.endswith("%") else int(raw), 10, round_up=True)
        except IntOrStringError as exc:
            raise ManifestError(path, str(exc)) from exc
        return raw if raw.endswith("%") else int(raw)
    value = _integer(raw, path)
    if value < 0:
        raise ManifestError(path, f"Invalid value: {value}: must be greater than or equal to 0")
    return value


def _strategy(raw: Any) -> RolloutStrategy:
    strategy = _mapping(raw, "spec.strategy")
    strategy_type = _enum(
        strategy.get("type"), "spec.strategy.type", (ROLLING_UPDATE, EXTERNAL), ROLLING_UPDATE
    )
    apply_strategy = dict(DEFAULT_APPLY_STRATEGY)
    apply_strategy.update(_mapping(strategy.get("applyStrategy"), "spec.strategy.applyStrategy"))
    if strategy_type == EXTERNAL:
        if strategy.get("rollingUpdate") is not None:
            raise ManifestError(
                "spec.strategy.rollingUpdate",
                "rollingUpdateConifg is not valid for ExternalRollout strategy type",
            )
        return RolloutStrategy(EXTERNAL, None, apply_strategy)
    rolling = _mapping(strategy.get("rollingUpdate"), "spec.strategy.rollingUpdate")
    period = rolling.get("unavailablePeriodSeconds")
    defaults = RollingUpdateConfig()
    if period is not None:
        period = _integer(period, "spec.strategy.rollingUpdate.unavailablePeriodSeconds")
        if period < 0:
            raise ManifestError(
                "spec.strategy.rollingUpdate.unavailablePeriodSeconds",
                f"unavailablePeriodSeconds must be greater than or equal to 0, got {period}",
            )
    config = RollingUpdateConfig(
        max_unavailable=_int_or_percent(
            rolling.get("maxUnavailable"),
            "spec.strategy.rollingUpdate.maxUnavailable",
            defaults.max_unavailable,
        ),
        max_surge=_int_or_percent(
            rolling.get("maxSurge"), "spec.strategy.rollingUpdate.maxSurge", defaults.max_surge
        ),
        unavailable_period_seconds=defaults.unavailable_period_seconds if period is None else period,
    )
    return RolloutStrategy(ROLLING_UPDATE, config, apply_strategy)


def _resource_selectors(raw: Any) -> tuple[Mapping[str, Any], ...]:
    path = "spec.resourceSelectors"
    if raw is None:
        raise ManifestError(path, "Required value")
    selectors = _list(raw, path, max_items=MAX_RESOURCE_SELECTORS)
    if not selectors:
        raise ManifestError(path, "Invalid value: 0: should have at least 1 items")
    for index, item in enumerate(selectors):
        where = f"{path}[{index}]"
        entry = _mapping(item, where)
        _string(entry.get("group"), f"{where}.group")
        _string(entry.get("version"), f"{where}.version", required=True)
        _string(entry.get("kind"), f"{where}.kind", required=True)
        if entry.get("labelSelector") is not None:
            if entry.get("name"):
                raise ManifestError(where, "the labelSelector and name fields are mutually exclusive")
            _selector(entry["labelSelector"], f"{where}.labelSelector")
    return tuple(dict(s) for s in selectors)


def parse_cluster_resource_placement(doc: Mapping[str, Any], warn: Warn) -> ClusterResourcePlacement:
    """A ClusterResourcePlacement manifest to a defaulted `ClusterResourcePlacement`."""
    metadata, name = _metadata(doc)
    if len(name) > MAX_NAME_LENGTH:
        raise ManifestError("metadata.name", f"the name field cannot have length exceeding {MAX_NAME_LENGTH}")
    spec = _mapping(doc.get("spec"), "spec", required=True)
    limit = spec.get("revisionHistoryLimit")
    if limit is not None:
        limit = _integer(limit, "spec.revisionHistoryLimit")
        if not 1 <= limit <= 1000:
            raise ManifestError(
                "spec.revisionHistoryLimit", f"Invalid value: {limit}: must be between 1 and 1000"
            )
    generation = metadata.get("generation")
    return ClusterResourcePlacement(
        name=name,
        resource_selectors=_resource_selectors(spec.get("resourceSelectors")),
        policy=_policy(spec.get("policy"), warn),
        strategy=_strategy(spec.get("strategy")),
        revision_history_limit=DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit,
        generation=1 if generation is None else _integer(generation, "metadata.generation"),
    )


# --- ClusterResourceBinding ------------------------------------------------------------------------


def _decision(raw: Any, path: str) -> ClusterDecision | None:
    if raw is None:
        return None
    entry = _mapping(raw, path)
    score = None
    if entry.get("clusterScore") is not None:
        raw_score = _mapping(entry["clusterScore"], f"{path}.clusterScore")
        score = ClusterScore(
            affinity_score=_integer(raw_score.get("affinityScore", 0), f"{path}.clusterScore.affinityScore"),
            topology_spread_score=_integer(
                raw_score.get("topologySpreadScore", 0), f"{path}.clusterScore.topologySpreadScore"
            ),
        )
    selected = entry.get("selected", False)
    if not isinstance(selected, bool):
        raise ManifestError(f"{path}.selected", f"Invalid value: {selected!r}: must be a boolean")
    return ClusterDecision(
        cluster_name=_string(entry.get("clusterName"), f"{path}.clusterName"),
        selected=selected,
        cluster_score=score,
        reason=_string(entry.get("reason"), f"{path}.reason"),
    )


def parse_cluster_resource_binding(doc: Mapping[str, Any]) -> ClusterResourceBinding:
    """A ClusterResourceBinding manifest to a `ClusterResourceBinding`."""
    metadata, name = _metadata(doc)
    labels = _string_map(metadata.get("labels"), "metadata.labels")
    if not labels.get(CRP_TRACKING_LABEL):
        raise ManifestError(
            "metadata.labels", f"Required value: label {CRP_TRACKING_LABEL} names the placement"
        )
    annotations = _string_map(metadata.get("annotations"), "metadata.annotations")
    spec = _mapping(doc.get("spec"), "spec", required=True)
    previous = annotations.get(PREVIOUS_BINDING_STATE_ANNOTATION)
    return ClusterResourceBinding(
        name=name,
        placement_name=labels[CRP_TRACKING_LABEL],
        target_cluster=_string(spec.get("targetCluster"), "spec.targetCluster", required=True),
        state=_enum(spec.get("state"), "spec.state", BINDING_STATES, ""),
        scheduling_policy_snapshot_name=_string(
            spec.get("schedulingPolicySnapshotName"), "spec.schedulingPolicySnapshotName"
        ),
        deleting=metadata.get("deletionTimestamp") is not None,
        cluster_decision=_decision(spec.get("clusterDecision"), "spec.clusterDecision"),
        previous_state=previous,
        resource_snapshot_name=_string(spec.get("resourceSnapshotName"), "spec.resourceSnapshotName"),
    )


def parse_fleet_object(doc: dict[str, Any], warn: Warn) -> FleetObject:
    """Parse one KubeFleet manifest; raise ManifestError for what the API server would reject."""
    kind = _string(doc.get("kind"), "kind", required=True)
    if kind == "MemberCluster":
        _check_api_version(doc, CLUSTER_GROUP)
        return parse_member_cluster(doc)
    if kind == "ClusterResourcePlacement":
        _check_api_version(doc, PLACEMENT_GROUP)
        return parse_cluster_resource_placement(doc, warn)
    if kind == "ClusterResourceBinding":
        _check_api_version(doc, PLACEMENT_GROUP)
        return parse_cluster_resource_binding(doc)
    raise ManifestError("kind", f"unsupported KubeFleet kind {kind!r}")
