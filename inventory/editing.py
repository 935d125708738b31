"""Edits of hub objects from the inventory: cluster taints and cluster-set bindings.

Every edit is validated here (Kubernetes' rules, in apimachinery's field-error wording, so the page
and the API say the same), authorised by one function per action (`can_edit_taints`: admin of a set
holding the cluster; `can_bind`: admin of the set and admin in the namespace, as inventory.roles
decides), written to the hub, and the row is then refreshed from the hub's answer through the sync's
own path (`sync.apply_event`, which also fires the change hook that reschedules placements). Each
attempt is audited with before/after and the hub's answer, the entry of an applied change in the same
transaction as its row; a hub that refuses or cannot be reached changes nothing locally.

`preview_taints` tells, before saving, which placements would keep, drop or gain the cluster: the
placement app answers through the hook `taint_impacts`, evaluating the placements that hold it or count
it as a candidate on the hub's inventory with the edited cluster in place of the stored one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, NoReturn, Protocol, overload

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.http import HttpRequest
from django.utils import timezone

from core.hooks import Hook
from inventory import audit, roles, sync
from inventory.hubclient import KINDS_BY_NAME, HubClient, HubError
from inventory.models import AuditEntry, Hub, ManagedCluster, ManagedClusterSet, ManagedClusterSetBinding
from placement.scheduler.fleet.types import NO_SCHEDULE
from placement.scheduler.labels import dns_label_error, label_value_error, qualified_name_error
from placement.scheduler.ocm.types import NO_SELECT, NO_SELECT_IF_NEW, PREFER_NO_SELECT
from placement.scheduler.timeutil import format_time

TAINTS_ACTION, BIND_ACTION, UNBIND_ACTION = "cluster.taints", "clusterset.bind", "clusterset.unbind"
OCM_CLUSTER, FLEET_CLUSTER = ManagedCluster.Kind.MANAGED_CLUSTER, ManagedCluster.Kind.MEMBER_CLUSTER
# The effects each kind's CRD allows, in the order the editor offers them.
EFFECTS: dict[str, tuple[str, ...]] = {
    OCM_CLUSTER: (NO_SELECT, NO_SELECT_IF_NEW, PREFER_NO_SELECT),
    FLEET_CLUSTER: (NO_SCHEDULE,),
}
TAINT_FIELDS = ("key", "value", "effect")
# Stamped by the OCM hub's webhook: echoed back by clients that send what they read, never taken from them.
TIME_ADDED = "timeAdded"
BINDING_KIND = "ManagedClusterSetBinding"
BINDING_API_VERSION = "cluster.open-cluster-management.io/v1beta2"
NOT_FOUND, CONFLICT = 404, 409

Write = Callable[[HubClient], dict[str, Any]]


# --- who may do what --------------------------------------------------------------------------------


def can_edit_taints(user: AbstractBaseUser, cluster: ManagedCluster) -> bool:
    """Admin of a set the cluster belongs to, or a superuser: a cluster's taints are its set admins' call."""
    return roles.can_administer_cluster(user, cluster)


def can_bind(user: AbstractBaseUser, cluster_set: ManagedClusterSet, namespace: str) -> bool:
    """Admin of `cluster_set` and admin in `namespace`, or a superuser: binding hands the set's clusters
    to the namespace's placements, which only the namespace's owners decide about."""
    return roles.can_bind(user, cluster_set, namespace)


def _refuse(
    actor: AbstractBaseUser, action: str, target: Any, request: HttpRequest | None, doing: str
) -> NoReturn:
    audit.record_refusal(actor, action, target, request=request)
    raise PermissionDenied(f"{actor.get_username()} may not {doing}")


# --- taint input -------------------------------------------------------------------------------------


def invalid_value(value: Any, why: str) -> str:
    """apimachinery's field.Invalid wording: the value quoted as Go's %q quotes a string."""
    return f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {why}"


def _text(entry: Mapping[str, Any], name: str, path: str, errors: dict[str, str]) -> str:
    value = entry.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        errors[f"{path}.{name}"] = invalid_value(value, "must be a string")
        return ""
    return value


def _taint_errors(kind: str, entry: Mapping[str, Any], path: str) -> dict[str, str]:
    errors = {
        f"{path}.{name}": "unknown field; a taint has key, value and effect"
        for name in sorted(set(entry) - {*TAINT_FIELDS, TIME_ADDED})
    }
    key, value, effect = (_text(entry, name, path, errors) for name in TAINT_FIELDS)
    if not key:
        errors.setdefault(f"{path}.key", "Required value")
    elif (why := qualified_name_error(key)) is not None:
        errors[f"{path}.key"] = invalid_value(key, why)
    if (why := label_value_error(value)) is not None:
        errors[f"{path}.value"] = invalid_value(value, why)
    allowed = EFFECTS[kind]
    if not effect:
        errors.setdefault(f"{path}.effect", "Required value")
    elif effect not in allowed:
        supported = ", ".join(f'"{name}"' for name in allowed)
        errors[f"{path}.effect"] = f"Unsupported value: {json.dumps(effect)}: supported values: {supported}"
    return errors


def taint_errors(kind: str, entries: Any) -> dict[str, str]:
    """Every problem of a submitted `spec.taints` by field path (`taints[1].key`); empty when valid.

    Keys must be unique: the OCM webhook finds a taint's previous `timeAdded` by its key.
    """
    if not isinstance(entries, list | tuple):
        return {"taints": "Invalid value: must be an array of taints"}
    errors: dict[str, str] = {}
    keys: set[str] = set()
    for index, entry in enumerate(entries):
        path = f"taints[{index}]"
        if not isinstance(entry, Mapping):
            errors[path] = "Invalid value: must be an object"
            continue
        errors.update(_taint_errors(kind, entry, path))
        key = entry.get("key")
        if isinstance(key, str) and key:
            if key in keys:
                errors.setdefault(f"{path}.key", f"Duplicate value: {json.dumps(key)}")
            keys.add(key)
    return errors


def _same_taint(old: Mapping[str, object], new: Mapping[str, object]) -> bool:
    return (old.get("value") or "") == new.get("value", "") and old.get("effect") == new["effect"]


def _taint(entry: Mapping[str, Any], old: Mapping[str, Any] | None) -> dict[str, str]:
    taint = {"key": entry["key"]}
    if entry.get("value"):
        taint["value"] = entry["value"]
    taint["effect"] = entry["effect"]
    if old is not None and old.get(TIME_ADDED) and _same_taint(old, taint):
        taint[TIME_ADDED] = old[TIME_ADDED]
    return taint


def planned_taints(cluster: ManagedCluster, entries: Any) -> list[dict[str, str]]:
    """The `spec.taints` to send; raises ValidationError({path: reason}).

    An unchanged taint (same key, value and effect) keeps its `timeAdded`, which the OCM webhook
    requires; a new or changed one goes without, for the hub to stamp.
    """
    if errors := taint_errors(cluster.kind, entries):
        raise ValidationError(errors)
    stamped = {t.get("key"): t for t in cluster.taints if isinstance(t, Mapping)}
    return [_taint(entry, stamped.get(entry["key"])) for entry in entries]


def taint_rows(cluster: ManagedCluster) -> list[dict[str, str]]:
    """The stored taints as the editor shows them (`timeAdded` blank where the hub never stamped one)."""
    return [
        {name: str(t.get(name) or "") for name in (*TAINT_FIELDS, TIME_ADDED)}
        for t in cluster.taints
        if isinstance(t, Mapping)
    ]


# --- taint preview -----------------------------------------------------------------------------------


class Impact(Protocol):
    """What a taint edit does to one placement's hold on the cluster (`placement.taint_impact.Impact`)."""

    @property
    def placement(self) -> models.Model: ...
    @property
    def holds(self) -> bool: ...
    @property
    def would_hold(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def verdict(self) -> str: ...


# What saving the edited taints would do to each placement that holds the cluster or counts it as a
# candidate: the placement app answers (`placement.taint_impact.impacts`), given the cluster, its taints as
# the hub will store them and the time of the preview.
TaintImpacts = Callable[[ManagedCluster, list[dict[str, str]], datetime], Sequence[Impact]]
taint_impacts: Hook[TaintImpacts] = Hook("the taint preview's placement impacts")


def _as_stamped(taints: Sequence[Mapping[str, str]], now: datetime) -> list[dict[str, str]]:
    """New and changed taints as the hub will store them: stamped with the time of the write."""
    return [{**taint, TIME_ADDED: taint.get(TIME_ADDED) or format_time(now)} for taint in taints]


def preview_taints(
    cluster: ManagedCluster, entries: Any, *, actor: AbstractBaseUser, now: datetime | None = None
) -> Sequence[Impact]:
    """What saving `entries` as the cluster's taints would do to each affected placement; writes nothing.

    Only for those who may save them (a preview names placements); raises PermissionDenied, or
    ValidationError({path: reason}) for invalid entries like `save_taints`.
    """
    if not can_edit_taints(actor, cluster):
        raise PermissionDenied(f"{actor.get_username()} may not edit taints of {cluster}")
    now = now or timezone.now()
    taints = _as_stamped(planned_taints(cluster, entries), now)
    return taint_impacts.get()(cluster, taints, now)


# --- hub writes --------------------------------------------------------------------------------------


def _answer_text(answer: Mapping[str, Any] | None, part: str) -> str:
    """The part of the hub's answer worth keeping in the audit log, with the version it wrote."""
    if not answer:
        return ""
    metadata = answer.get("metadata") or {}
    kept = {"resourceVersion": metadata.get("resourceVersion"), part: (answer.get("spec") or {}).get(part)}
    return json.dumps(kept, sort_keys=True)


@overload
def _write(
    actor: AbstractBaseUser,
    action: str,
    target: Any,
    request: HttpRequest | None,
    change: tuple[Any, Any],
    write: Write,
    *,
    absent_ok: Literal[False] = False,
) -> dict[str, Any]: ...
@overload
def _write(
    actor: AbstractBaseUser,
    action: str,
    target: Any,
    request: HttpRequest | None,
    change: tuple[Any, Any],
    write: Write,
    *,
    absent_ok: bool,
) -> dict[str, Any] | None: ...
def _write(
    actor: AbstractBaseUser,
    action: str,
    target: Any,
    request: HttpRequest | None,
    change: tuple[Any, Any],
    write: Write,
    *,
    absent_ok: bool = False,
) -> dict[str, Any] | None:
    """Run `write` against the target's hub; a refusal is audited as failed (before/after = `change`).
    With `absent_ok`, a 404 answers None: what was to be deleted is gone already."""
    try:
        with HubClient(target.hub) as client:
            return write(client)
    except HubError as exc:
        if absent_ok and exc.status == NOT_FOUND:
            return None
        before, after = change
        audit.record(
            actor,
            action,
            target,
            hub=target.hub,
            before=before,
            after=after,
            outcome=AuditEntry.Outcome.FAILED,
            hub_answer=str(exc),
            request=request,
        )
        raise


def _mirror(
    hub: Hub, kind_name: str, event_type: str, obj: dict[str, Any], record: Callable[[], object]
) -> None:
    """The hub's answer written to its row and `record()` (the audit entry) in one transaction, so a
    change is never stored without its entry, nor its entry without the change. The watcher sees the
    hub's event too and may insert the same row at the same moment: the sync's upsert then writes again,
    finding the watcher's row."""
    sync.apply_event(hub, KINDS_BY_NAME[kind_name], event_type, obj, also=record)


def _reload(cluster: ManagedCluster) -> None:
    """After a Conflict: the row as the hub has it now, so the person editing sees what changed."""
    try:
        with HubClient(cluster.hub) as client:
            fresh = client.get_cluster(cluster.kind, cluster.name)
    except HubError:
        return  # the Conflict is reported either way; the next sync or watch event refreshes the row
    sync.apply_event(cluster.hub, KINDS_BY_NAME[cluster.kind], "MODIFIED", fresh)


def save_taints(
    cluster: ManagedCluster, entries: Any, *, actor: AbstractBaseUser, request: HttpRequest | None = None
) -> ManagedCluster:
    """Write `entries` as the cluster's `spec.taints` (a JSON merge patch, conditional on the row's
    resourceVersion) and refresh the row from the hub's answer; answers the refreshed row.

    Raises PermissionDenied, ValidationError({path: reason}) or HubError (status 409 when the cluster
    changed on the hub meanwhile: the row is then reloaded from the hub). Only success changes the row.
    """
    if not can_edit_taints(actor, cluster):
        _refuse(actor, TAINTS_ACTION, cluster, request, f"edit the taints of cluster {cluster}")
    taints = planned_taints(cluster, entries)
    before = copy.deepcopy(cluster.taints)
    patch: dict[str, Any] = {"spec": {"taints": taints}}
    if cluster.resource_version:
        patch["metadata"] = {"resourceVersion": cluster.resource_version}
    try:
        answer = _write(
            actor,
            TAINTS_ACTION,
            cluster,
            request,
            (before, taints),
            lambda client: client.patch_cluster(cluster.kind, cluster.name, patch),
        )
    except HubError as exc:
        if exc.status == CONFLICT:
            _reload(cluster)
        raise

    def record() -> None:
        cluster.refresh_from_db()  # as written, with the times the hub stamped
        audit.record(
            actor,
            TAINTS_ACTION,
            cluster,
            hub=cluster.hub,
            before=before,
            after=cluster.taints,
            hub_answer=_answer_text(answer, "taints"),
            request=request,
        )

    _mirror(cluster.hub, cluster.kind, "MODIFIED", answer, record)
    return cluster


# --- cluster-set bindings ----------------------------------------------------------------------------


def namespace_error(namespace: Any) -> str | None:
    """Why `namespace` cannot be bound to: namespaces are RFC 1123 labels."""
    if not isinstance(namespace, str):
        return invalid_value(namespace, "must be a string")
    if not namespace:
        return "Required value"
    why = dns_label_error(namespace)
    return None if why is None else invalid_value(namespace, why)


def _binding_object(namespace: str, set_name: str, **metadata: str) -> dict[str, Any]:
    """A ManagedClusterSetBinding: the hub requires its name to be the name of the set it binds."""
    return {
        "apiVersion": BINDING_API_VERSION,
        "kind": BINDING_KIND,
        "metadata": {"name": set_name, "namespace": namespace, **metadata},
        "spec": {"clusterSet": set_name},
    }


def _binding_summary(binding: Mapping[str, Any]) -> dict[str, str]:
    return {"namespace": binding["metadata"]["namespace"], "clusterSet": binding["spec"]["clusterSet"]}


def bind(
    cluster_set: ManagedClusterSet,
    namespace: Any,
    *,
    actor: AbstractBaseUser,
    request: HttpRequest | None = None,
) -> ManagedClusterSetBinding:
    """Create the set's ManagedClusterSetBinding in `namespace` on the hub, then its row; audited on the
    set. Raises ValidationError({"namespace": reason}), PermissionDenied or HubError. The namespace is
    checked first, as the right to bind depends on it; its syntax tells nothing about the hub."""
    if (why := namespace_error(namespace)) is not None:
        raise ValidationError({"namespace": why})
    if not can_bind(actor, cluster_set, namespace):
        _refuse(actor, BIND_ACTION, cluster_set, request, f"bind cluster set {cluster_set} into {namespace}")
    bindings = ManagedClusterSetBinding.objects.filter(hub_id=cluster_set.hub_id, name=cluster_set.name)
    if bindings.filter(namespace=namespace).exists():
        raise ValidationError({"namespace": f"Duplicate value: {json.dumps(namespace)}: already bound"})
    body = _binding_object(namespace, cluster_set.name)
    answer = _write(
        actor,
        BIND_ACTION,
        cluster_set,
        request,
        (None, _binding_summary(body)),
        lambda client: client.create_cluster_set_binding(namespace, body),
    )
    _mirror(
        cluster_set.hub,
        BINDING_KIND,
        "ADDED",
        answer,
        lambda: audit.record(
            actor,
            BIND_ACTION,
            cluster_set,
            hub=cluster_set.hub,
            after=_binding_summary(body),
            hub_answer=_answer_text(answer, "clusterSet"),
            request=request,
        ),
    )
    return bindings.get(namespace=namespace)


def unbind(
    binding: ManagedClusterSetBinding, *, actor: AbstractBaseUser, request: HttpRequest | None = None
) -> None:
    """Delete the binding on the hub, then its row; audited on its set. A binding the hub no longer has
    is removed here too (outcome no-op). Raises PermissionDenied, ValidationError (a binding of a set the
    hub does not have: whom it concerns is unknown, so it is removed on the hub) or HubError."""
    sets = ManagedClusterSet.objects.select_related("hub")
    cluster_set = sets.filter(hub_id=binding.hub_id, name=binding.cluster_set).first()
    if cluster_set is None:
        raise ValidationError(
            {"cluster_set": f"cluster set {binding.cluster_set} is not on hub {binding.hub}; unbind it there"}
        )
    if not can_bind(actor, cluster_set, binding.namespace):
        _refuse(
            actor,
            UNBIND_ACTION,
            cluster_set,
            request,
            f"unbind cluster set {cluster_set} from {binding.namespace}",
        )
    current = _binding_object(binding.namespace, binding.cluster_set, uid=binding.uid)
    current["metadata"]["name"] = binding.name
    before = _binding_summary(current)
    answer = _write(
        actor,
        UNBIND_ACTION,
        cluster_set,
        request,
        (before, None),
        lambda client: client.delete_cluster_set_binding(binding.namespace, binding.name),
        absent_ok=True,
    )
    gone = answer is None
    _mirror(
        cluster_set.hub,
        BINDING_KIND,
        "DELETED",
        current,
        lambda: audit.record(
            actor,
            UNBIND_ACTION,
            cluster_set,
            hub=cluster_set.hub,
            before=before,
            outcome=AuditEntry.Outcome.NO_OP if gone else AuditEntry.Outcome.OK,
            hub_answer="not found on the hub: already unbound" if gone else "deleted",
            request=request,
        ),
    )
