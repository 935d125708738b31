"""KubeFleet manifests (YAML/JSON objects) to scheduler inputs, validated like the API server would.

`parse_fleet_object` accepts MemberCluster (`cluster.kubernetes-fleet.io` v1beta1/v1) and
ClusterResourcePlacement / ClusterResourceBinding (`placement.kubernetes-fleet.io` v1beta1/v1). What the
CRD schema or the validating webhook rejects raises `ManifestError(field, message)` with the JSON path,
except an affinity label selector apimachinery cannot convert: a hub without the webhook stores it and the
scheduler aborts its cycle on it, so it is kept (`ClusterSelectorTerm.selector_problem`).
`SetPlacementDefaults` is applied to what is accepted. `parse_placement_policy` and
`parse_rollout_strategy` read one `spec.policy` / `spec.strategy` on their own (the rollout planners
use them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from placement.scheduler.errors import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, ManifestError, in_range
from placement.scheduler.fleet.properties import CAPACITY_TYPES, RESOURCE_PROPERTY_PREFIX
from placement.scheduler.fleet.types import (
    ASCENDING,
    BINDING_STATES,
    CRP_TRACKING_LABEL,
    DEFAULT_APPLY_STRATEGY,
    DEFAULT_MAX_SURGE,
    DEFAULT_MAX_UNAVAILABLE,
    DEFAULT_REVISION_HISTORY_LIMIT,
    DEFAULT_UNAVAILABLE_PERIOD_SECONDS,
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
    BindingCondition,
    ClusterAffinity,
    ClusterDecision,
    ClusterResourceBinding,
    ClusterResourcePlacement,
    ClusterScore,
    ClusterSelectorTerm,
    MemberCluster,
    OverrideSnapshots,
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
    SelectorError,
    dns_subdomain_error,
    label_value_error,
    parse_optional_label_selector,
    parse_stored_label_selector,
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
_INT_OR_PERCENT = re.compile(_INT_OR_PERCENT_PATTERN)

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


def _integer(
    raw: Any, path: str, default: int | None = None, *, minimum: int = INT32_MIN, maximum: int = INT32_MAX
) -> int:
    """An integer (an int32 unless told otherwise), as the hub's Go types hold it."""
    if raw is None and default is not None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ManifestError(path, f"Invalid value: {raw!r}: must be an integer")
    return in_range(raw, path, minimum, maximum)


def _int64(raw: Any, path: str, default: int | None = None) -> int:
    return _integer(raw, path, default, minimum=INT64_MIN, maximum=INT64_MAX)


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


def _conditions(raw: Any, path: str) -> list[tuple[Mapping[str, Any], str, dict[str, Any]]]:
    """Each `conditions[]` entry with its path and the fields every condition kind has."""
    result = []
    for index, item in enumerate(_list(raw, path)):
        where = f"{path}[{index}]"
        condition = _mapping(item, where)
        common = {
            "type": _string(condition.get("type"), f"{where}.type", required=True),
            "status": _string(condition.get("status"), f"{where}.status", required=True),
            "last_transition_time": _time(condition.get("lastTransitionTime"), f"{where}.lastTransitionTime"),
            "reason": _string(condition.get("reason"), f"{where}.reason"),
        }
        result.append((condition, where, common))
    return result


def _agent_status(raw: Any, path: str) -> AgentStatus:
    entry = _mapping(raw, path)
    conditions = [
        AgentCondition(**common, message=_string(condition.get("message"), f"{where}.message"))
        for condition, where, common in _conditions(entry.get("conditions"), f"{path}.conditions")
    ]
    return AgentStatus(
        type=_string(entry.get("type"), f"{path}.type", required=True),
        conditions=tuple(conditions),
        last_received_heartbeat=_time(entry.get("lastReceivedHeartbeat"), f"{path}.lastReceivedHeartbeat"),
    )


def parse_agent_statuses(raw: Any) -> tuple[AgentStatus, ...]:
    """A MemberCluster's `status.agentStatus` list to `AgentStatus`es."""
    return tuple(
        _agent_status(a, f"status.agentStatus[{i}]") for i, a in enumerate(_list(raw, "status.agentStatus"))
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
        agent_status=parse_agent_statuses(status.get("agentStatus")),
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
    if len(segments) > 1 and dns_subdomain_error(segments[0]) and qualified_name_error(segments[0]):
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


def _property_selector(raw: Any, path: str) -> tuple[PropertySelectorRequirement, ...]:
    selector = _mapping(raw, path)
    where = f"{path}.matchExpressions"
    # upstream's webhook does not look for requirements that contradict each other (it leaves that as
    # a TODO): such a term is admitted and simply matches no cluster
    return tuple(
        _requirement(r, f"{where}[{i}]") for i, r in enumerate(_list(selector.get("matchExpressions"), where))
    )


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
    raw_selector = entry.get("labelSelector")
    try:
        label_selector, problem = parse_stored_label_selector(raw_selector, f"{path}.labelSelector")
    except SelectorError as exc:
        raise ManifestError(exc.field, exc.message) from exc
    term = ClusterSelectorTerm(
        # a missing selector checks no labels
        label_selector=None if raw_selector is None else label_selector,
        property_selector=_property_selector(entry.get("propertySelector"), f"{path}.propertySelector"),
        property_sorter=_sorter(entry, path, warn),
        selector_problem=problem,
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
    max_skew = _integer(entry.get("maxSkew"), f"{path}.maxSkew", default=1)
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
        if dns_subdomain_error(name) is not None or len(name) > MAX_NAME_LENGTH:
            raise ManifestError(
                f"{path}[{index}]", f"PickFixed cluster name {name} is not a valid member name"
            )
        if name in names:
            raise ManifestError(path, f"cluster names must be unique for policy type {PICK_FIXED}")
        names.append(name)
    return tuple(names)


def parse_placement_policy(raw: Any, warn: Warn, field_path: str = "spec.policy") -> PlacementPolicy:
    """Default and validate a placement's `spec.policy` as SetPlacementDefaults, the CRD and the webhook do.

    A missing policy is PickAll. `field_path` is where `raw` sits in its document; raises ManifestError.
    """
    if raw is None:
        return PlacementPolicy()
    policy = _mapping(raw, field_path)
    placement_type = _enum(
        policy.get("placementType"), f"{field_path}.placementType", PLACEMENT_TYPES, PICK_ALL
    )
    names_path = f"{field_path}.clusterNames"
    names = _cluster_names(policy.get("clusterNames"), names_path)
    if placement_type == PICK_FIXED and not names:
        raise ManifestError(names_path, f"cluster names cannot be empty for policy type {PICK_FIXED}")
    if placement_type != PICK_FIXED and names:
        raise ManifestError(
            names_path,
            f"cluster names needs to be empty for policy type {placement_type}, "
            "only valid for PickFixed policy type",
        )
    number_path = f"{field_path}.numberOfClusters"
    number = policy.get("numberOfClusters")
    if placement_type == PICK_N:
        if number is None:
            raise ManifestError(number_path, f"number of cluster cannot be nil for policy type {PICK_N}")
        number = _integer(number, number_path)
        if number < 0:
            raise ManifestError(
                number_path, f"number of clusters cannot be {number} for policy type {PICK_N}"
            )
    elif number is not None:
        raise ManifestError(
            number_path,
            f"number of clusters must be nil for policy type {placement_type}, "
            "only valid for PickN placement policy type",
        )
    affinity_path = f"{field_path}.affinity"
    affinity_raw = _mapping(policy.get("affinity"), affinity_path)
    if placement_type == PICK_FIXED and policy.get("affinity") is not None:
        raise ManifestError(
            affinity_path,
            f"affinity must be nil for policy type {PICK_FIXED}, "
            "only valid for PickAll/PickN placement policy types",
        )
    affinity = None
    if affinity_raw.get("clusterAffinity") is not None:
        affinity = _cluster_affinity(
            affinity_raw["clusterAffinity"], f"{affinity_path}.clusterAffinity", placement_type, warn
        )
    constraints_path = f"{field_path}.topologySpreadConstraints"
    constraints_raw = _list(policy.get("topologySpreadConstraints"), constraints_path)
    if constraints_raw and placement_type != PICK_N:
        raise ManifestError(
            constraints_path,
            f"topology spread constraints needs to be empty for policy type {placement_type}, "
            "only valid for PickN policy type",
        )
    tolerations_path = f"{field_path}.tolerations"
    if placement_type == PICK_FIXED and policy.get("tolerations") is not None:
        raise ManifestError(
            tolerations_path,
            f"tolerations needs to be empty for policy type {PICK_FIXED}, only valid for PickAll/PickN",
        )
    return PlacementPolicy(
        placement_type=placement_type,
        cluster_names=names,
        number_of_clusters=number,
        affinity=affinity,
        topology_spread_constraints=tuple(
            _topology_constraint(c, f"{constraints_path}[{i}]") for i, c in enumerate(constraints_raw)
        ),
        tolerations=_tolerations(policy.get("tolerations"), tolerations_path),
    )


def _int_or_percent(raw: Any, path: str, default: str) -> int | str:
    """`maxUnavailable` / `maxSurge`: the CRD pattern on strings, then the webhook's scaling check."""
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise ManifestError(path, f"Invalid value: {raw!r}: must be an integer or a percentage string")
    if isinstance(raw, int):
        in_range(raw, path)
    if isinstance(raw, str) and not _INT_OR_PERCENT.fullmatch(raw):
        raise ManifestError(
            path, f"Invalid value: \"{raw}\": {path} in body should match '{_INT_OR_PERCENT_PATTERN}'"
        )
    name = path.rpartition(".")[2]
    # upstream webhook: scale against 10 just to surface a parse error or a negative value
    try:
        scaled = scaled_value(raw, 10, round_up=True)
    except IntOrStringError as exc:
        # a bare digit string ("5") passes the CRD pattern but is not a percentage
        raise ManifestError(path, f"{name} `{raw}` is invalid: {exc}") from exc
    if scaled < 0:
        raise ManifestError(path, f"{name} must be greater than or equal to 0, got `{raw}`")
    return raw


def _rolling_update(raw: Any, path: str) -> RollingUpdateConfig:
    rolling = _mapping(raw, path)
    period_path = f"{path}.unavailablePeriodSeconds"
    period = _integer(
        rolling.get("unavailablePeriodSeconds"), period_path, DEFAULT_UNAVAILABLE_PERIOD_SECONDS
    )
    if period < 0:
        raise ManifestError(
            period_path, f"unavailablePeriodSeconds must be greater than or equal to 0, got {period}"
        )
    return RollingUpdateConfig(
        max_unavailable=_int_or_percent(
            rolling.get("maxUnavailable"), f"{path}.maxUnavailable", DEFAULT_MAX_UNAVAILABLE
        ),
        max_surge=_int_or_percent(rolling.get("maxSurge"), f"{path}.maxSurge", DEFAULT_MAX_SURGE),
        unavailable_period_seconds=period,
    )


def parse_rollout_strategy(raw: Any, field_path: str = "spec.strategy") -> RolloutStrategy:
    """Default and validate a placement's `spec.strategy` (SetPlacementDefaults, CRD schema, webhook).

    A missing or empty type is RollingUpdate with 25% / 25% / 60 s; External takes no `rollingUpdate`.
    `field_path` is where `raw` sits in its document; raises ManifestError with upstream's wording.
    """
    strategy = _mapping(raw, field_path)
    raw_type = strategy.get("type")
    # SetPlacementDefaults (mutating webhook) fills an empty type before the CRD enum is checked
    strategy_type = _enum(
        None if raw_type == "" else raw_type, f"{field_path}.type", (ROLLING_UPDATE, EXTERNAL), ROLLING_UPDATE
    )
    apply_strategy = dict(DEFAULT_APPLY_STRATEGY)
    apply_strategy.update(_mapping(strategy.get("applyStrategy"), f"{field_path}.applyStrategy"))
    rolling_path = f"{field_path}.rollingUpdate"
    if strategy_type == EXTERNAL:
        if strategy.get("rollingUpdate") is not None:
            # upstream webhook text, typos included
            raise ManifestError(
                rolling_path, "rollingUpdateConifg is not valid for ExternalRollout strategy type"
            )
        return RolloutStrategy(EXTERNAL, None, apply_strategy)
    return RolloutStrategy(
        ROLLING_UPDATE, _rolling_update(strategy.get("rollingUpdate"), rolling_path), apply_strategy
    )


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
            parse_optional_label_selector(entry["labelSelector"], f"{where}.labelSelector")
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
    return ClusterResourcePlacement(
        name=name,
        resource_selectors=_resource_selectors(spec.get("resourceSelectors")),
        policy=parse_placement_policy(spec.get("policy"), warn),
        strategy=parse_rollout_strategy(spec.get("strategy")),
        revision_history_limit=DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit,
        generation=_int64(metadata.get("generation"), "metadata.generation", default=1),
    )


# --- ClusterResourceBinding ------------------------------------------------------------------------


def _decision(raw: Any, path: str) -> ClusterDecision | None:
    if raw is None:
        return None
    entry = _mapping(raw, path)
    score = None
    given = entry.get("clusterScore")
    raw_score = {} if given is None else _mapping(given, f"{path}.clusterScore")
    # a score without values is no score: upstream's pointers stay nil
    if raw_score.keys() & {"affinityScore", "priorityScore"}:
        score = ClusterScore(
            affinity_score=_integer(raw_score.get("affinityScore", 0), f"{path}.clusterScore.affinityScore"),
            # the API names the topology spread score `priorityScore` on the wire
            topology_spread_score=_integer(
                raw_score.get("priorityScore", 0), f"{path}.clusterScore.priorityScore"
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


def _override_snapshots(spec: Mapping[str, Any]) -> OverrideSnapshots:
    cluster_path, namespaced_path = "spec.clusterResourceOverrideSnapshots", "spec.resourceOverrideSnapshots"
    cluster_scoped = tuple(
        _string(item, f"{cluster_path}[{i}]", required=True)
        for i, item in enumerate(_list(spec.get("clusterResourceOverrideSnapshots"), cluster_path))
    )
    namespaced = []
    for index, item in enumerate(_list(spec.get("resourceOverrideSnapshots"), namespaced_path)):
        where = f"{namespaced_path}[{index}]"
        entry = _mapping(item, where)
        snapshot = _string(entry.get("name"), f"{where}.name", required=True)
        namespace = _string(entry.get("namespace"), f"{where}.namespace", required=True)
        namespaced.append(f"{namespace}/{snapshot}")
    return OverrideSnapshots(cluster_scoped, tuple(namespaced))


def _binding_conditions(status: Mapping[str, Any]) -> tuple[BindingCondition, ...]:
    conditions = []
    for condition, where, common in _conditions(status.get("conditions"), "status.conditions"):
        observed = _int64(condition.get("observedGeneration"), f"{where}.observedGeneration", default=0)
        conditions.append(BindingCondition(**common, observed_generation=observed))
    return tuple(conditions)


def parse_cluster_resource_binding(doc: Mapping[str, Any]) -> ClusterResourceBinding:
    """A ClusterResourceBinding manifest to a `ClusterResourceBinding` (scheduling and rollout facts)."""
    metadata, name = _metadata(doc)
    labels = _string_map(metadata.get("labels"), "metadata.labels")
    if not labels.get(CRP_TRACKING_LABEL):
        raise ManifestError(
            "metadata.labels", f"Required value: label {CRP_TRACKING_LABEL} names the placement"
        )
    annotations = _string_map(metadata.get("annotations"), "metadata.annotations")
    spec = _mapping(doc.get("spec"), "spec", required=True)
    status = _mapping(doc.get("status"), "status")
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
        overrides=_override_snapshots(spec),
        generation=_int64(metadata.get("generation"), "metadata.generation", default=0),
        conditions=_binding_conditions(status),
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
