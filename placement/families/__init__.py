"""The two API families of placements, OCM `Placement` and Fleet `ClusterResourcePlacement`, one adapter
each: everything that differs between them lives in `ocm.py` or `fleet.py`, and callers ask
`Placement.family` (or `family(kind)`) instead of comparing kinds.

Other modules import this package as a module (`from placement import families`) and name its functions
when they call them: the adapters use the service, which uses modules that use the adapters.

The adapters sit below the pages, the API, the forms and the tasks, and use the service's shared
machinery (the hub snapshot, the stored-state read, the run's writes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from placement.families import fleet, ocm

if TYPE_CHECKING:
    from django.db import models
    from django.db.models import Q, QuerySet, Subquery

    from inventory import roles
    from inventory.changes import HubChanges
    from inventory.models import Hub, ManagedCluster
    from placement.models import Placement
    from placement.scheduler.record import ClusterRecord
    from placement.service import HubSnapshot, Planned, ScheduleResult, StoredRows, _Stored
    from placement.tables import FixedCluster, ScoreRow, ScoreTable


class Family(Protocol):
    """What callers need of a placement's API family. `Parsed` values are the family's own scheduler
    types: what its `parse` answers is what its `schedule`, `plan` and `toleration_errors` take."""

    @property
    def kind(self) -> str: ...
    @property
    def label(self) -> str:
        """OCM or Fleet, as lists show the family."""

    @property
    def api_version(self) -> str: ...
    @property
    def namespaced(self) -> bool:
        """OCM Placements live in a namespace; ClusterResourcePlacements are cluster-scoped."""

    @property
    def cluster_kind(self) -> str:
        """The ManagedCluster row kind its placements select (ManagedCluster or MemberCluster)."""

    @property
    def reads_heartbeats(self) -> bool:
        """Its scheduler reads the agents' heartbeats (a stale member is not eligible)."""

    @property
    def has_update_runs(self) -> bool:
        """Staged update runs roll its placements out (placement.rollouts)."""

    @property
    def publishes_decisions(self) -> bool:
        """A dashboard-owned placement's decisions are copied to the hub (placement.publishing)."""

    @property
    def rolls_out_bindings(self) -> bool:
        """A dashboard-owned placement's bindings are written to its hub and rolled out by the dashboard
        onto its resource snapshots (placement.rollouts.rolling, placement.hubbindings)."""

    @property
    def previews_rollout(self) -> bool:
        """Its rollout is the hub's, by decision groups; the dashboard previews it step by step
        (placement.rollouts.preview)."""

    @property
    def event_source(self) -> str:
        """The component upstream records its events as."""

    @property
    def chart_title(self) -> str: ...
    @property
    def chart_axis(self) -> str: ...
    @property
    def whatif_fields(self) -> Sequence[str]:
        """The fields a what-if override may set."""

    @property
    def whatif_template(self) -> str:
        """The what-if controls of the placement page."""

    @property
    def results_template(self) -> str:
        """The section of the placement page showing the stored result (decisions or bindings)."""

    @property
    def tolerations_path(self) -> str:
        """Where the spec keeps the tolerations (the field path of the parsers' messages)."""

    @property
    def has_toleration_seconds(self) -> bool: ...
    @property
    def toleration_rules(self) -> str:
        """The toleration editor's sentence on the rules a toleration must follow."""

    def access_rule(self, held: roles.Held) -> Q: ...
    def may_place(self, held: roles.Held, hub: Hub, namespace: str) -> bool: ...
    def tolerations_holder(self, spec: Mapping[str, Any]) -> Any: ...
    def editable_tolerations_holder(self, spec: dict[str, Any]) -> dict[str, Any]: ...
    def tolerations_override(
        self, spec: Mapping[str, Any], tolerations: list[dict[str, Any]]
    ) -> dict[str, Any]: ...
    def toleration_errors(self, parsed: Any) -> dict[str, str]: ...
    def describe_status(self, placement: Placement, report: Mapping[str, Any]) -> list[str]: ...
    def result_owner(self, row: models.Model) -> tuple[str, str] | None:
        """(namespace, name) of the placement a row of its stored result belongs to."""

    def requeued_by(self, changes: HubChanges) -> set[tuple[str, str]]:
        """(namespace, name) of the placements an inventory change re-queues."""

    def edited_snapshot(self, snapshot: HubSnapshot, edited: ManagedCluster) -> HubSnapshot: ...
    def taint_candidates(self, cluster: ManagedCluster) -> set[int]:
        """Ids of the placements that count a cluster of the family as a candidate."""

    def taint_verdict(
        self,
        placement: Placement,
        holds: bool,
        name: str,
        snapshots: tuple[HubSnapshot, HubSnapshot],
        now: datetime,
    ) -> tuple[bool, str] | None: ...
    def filtered_by(self, result: Any, name: str) -> str | None: ...
    def selection_counts(self, hub_ids: Sequence[int], names: Sequence[str]) -> dict[tuple[int, str], int]:
        """(hub id, cluster name) -> how many placements of the family select the cluster."""

    def placements_selecting(self, cluster: ManagedCluster) -> Iterable[int] | QuerySet[Any]:
        """Ids of the placements of the family that select the cluster."""

    def selection_size(self) -> Subquery:
        """How many clusters the stored selection of the placement of the outer row holds (the rows it
        owns like itself, as `current_selection` reads them), as SQL for `placement.queries`."""

    def policy_summary(self, spec: Mapping[str, Any]) -> str: ...
    def requested(self, placement: Placement) -> str: ...
    def parse(self, doc: dict[str, Any]) -> Any: ...
    def schedule(
        self,
        placement: Placement,
        parsed: Any,
        snapshot: HubSnapshot,
        now: datetime,
        *,
        spec: Mapping[str, Any] | None = None,
    ) -> ScheduleResult: ...
    def stored_rows(self, placements: Sequence[Placement]) -> dict[int, StoredRows]: ...
    def selected(self, rows: Iterable[Any]) -> list[str]: ...
    def observed_selection(self, placement: Placement, snapshot: HubSnapshot) -> list[str]: ...
    def plan(
        self, placement: Placement, parsed: Any, stored: _Stored, snapshot: HubSnapshot, now: datetime
    ) -> Planned: ...
    def current_selection(self, placement: Placement) -> list[str]: ...
    def stored_objects(self, placement: Placement) -> QuerySet[Any]: ...
    def prioritizer_columns(self, explanation: Mapping[str, Any]) -> list[tuple[str, int | None]]: ...
    def score_table(self, explanation: Mapping[str, Any], record: ClusterRecord) -> ScoreTable: ...
    def fixed_clusters(
        self, explanation: Mapping[str, Any], record: ClusterRecord
    ) -> list[FixedCluster] | None:
        """The clusters a fixed-list policy names, with their status (None: the policy picks them)."""

    def whatif_spec(self, spec: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]: ...
    def whatif_rows(self, result: Any, names: Sequence[str], limit: int) -> tuple[list[ScoreRow], int]: ...
    def whatif_weights(self, result: Any) -> dict[str, int]: ...
    def whatif_conditions(self, result: Any) -> list[dict[str, Any]]: ...
    def whatif_controls(self, placement: Placement) -> dict[str, Any]: ...


_FAMILIES: dict[str, Family] = {adapter.kind: adapter for adapter in (ocm.OCM, fleet.FLEET)}


def family(kind: str) -> Family:
    """The adapter of a `Placement.Kind` value."""
    return _FAMILIES[kind]


def all_families() -> list[Family]:
    """Every family's adapter."""
    return list(_FAMILIES.values())


def of_cluster(cluster_kind: str) -> Family:
    """The family whose placements select clusters of this ManagedCluster row kind."""
    return next(adapter for adapter in _FAMILIES.values() if adapter.cluster_kind == cluster_kind)
