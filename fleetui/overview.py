"""What needs attention, for the home page: per concern a count, its first rows and the list filtered to
exactly those rows, restricted to what the user's roles show (`inventory.roles.restrict`).

Each card reads its first `SHOWN + 1` rows in one query and counts them only when there are more, so the
page costs at most two queries a card whatever the size of the fleet; the filters are the lists' own
(each app's filtersets.py uses the same query functions), so a card's count is the filtered list's.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from django.db.models import Exists, Model, OuterRef, QuerySet
from django.urls import reverse
from django.utils.http import urlencode
from django_stubs_ext import WithAnnotations

from inventory import queries as inventory_queries
from inventory import roles
from inventory.models import Hub, ManagedCluster, SyncRun
from placement import queries
from placement.models import ApprovalRequest, Placement, StagedUpdateRun
from placement.rollouts import runs
from placement.rollouts.tables import RunSummary

M = TypeVar("M", bound=Model)


class Syncing(TypedDict):
    """What the last-sync table adds to each hub: whether a sync of it runs now."""

    syncing: bool


if TYPE_CHECKING:  # WithAnnotations takes a TypedDict only in annotations, not at run time
    HubWithSyncing = WithAnnotations[Hub, Syncing]

# Rows a card lists; the rest are behind its link.
SHOWN = 5
# Hubs the last-sync table lists; the rest are behind the hub list's link.
HUBS_SHOWN = 10


@dataclass(frozen=True)
class Item:
    """One row of a card: the object's name, its page, and a short why."""

    name: str
    url: str
    detail: str


@dataclass(frozen=True)
class Card:
    key: str
    title: str
    description: str
    count: int
    items: list[Item]
    # the list filtered to exactly the counted rows
    url: str
    # whether a non-zero count asks for action (a problem) or only informs (work in progress)
    problem: bool

    @property
    def more(self) -> int:
        return self.count - len(self.items)


@dataclass(frozen=True)
class HubSync:
    hub: Hub
    state: str
    last_synced_at: datetime | None
    syncing: bool
    # the sync error, for superusers only (it may name what the hub hides from others)
    error: str


@dataclass(frozen=True)
class Overview:
    cards: list[Card]
    hubs: list[HubSync]
    hub_count: int

    @property
    def problems(self) -> list[Card]:
        return [card for card in self.cards if card.problem]

    @property
    def in_progress(self) -> list[Card]:
        return [card for card in self.cards if not card.problem]

    @property
    def all_clear(self) -> bool:
        return not any(card.count for card in self.problems)


def _url(name: str, query: Mapping[str, str]) -> str:
    return f"{reverse(name)}?{urlencode(query)}"


def _first(rows: QuerySet[M]) -> tuple[list[M], int]:
    """The first SHOWN rows and how many there are: one query, two when there are more."""
    first = list(rows[: SHOWN + 1])
    return first[:SHOWN], (len(first) if len(first) <= SHOWN else rows.count())


def _card(
    key: str,
    title: str,
    description: str,
    rows: QuerySet[M],
    item: Callable[[M], Item],
    url: str,
    *,
    problem: bool = True,
) -> Card:
    shown, count = _first(rows)
    return Card(key, title, description, count, [item(row) for row in shown], url, problem)


def _condition_message(status: Mapping[str, Any], types: Sequence[str]) -> str:
    for condition in status.get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") in types:
            return str(condition.get("message") or condition.get("reason") or "")
    return ""


# --- the items of each kind


def _cluster(cluster: ManagedCluster) -> Item:
    url = reverse("inventory:cluster-detail", args=[cluster.pk])
    badge = cluster.cluster_kind.badge
    return Item(cluster.name, url, " · ".join(filter(None, [cluster.hub.name, badge])))


def _silent_cluster(cluster: ManagedCluster) -> Item:
    why = "stale: its hub's last sync failed" if cluster.stale else "no heartbeat: availability unknown"
    base = _cluster(cluster)
    return Item(base.name, base.url, f"{base.detail} · {why}")


def _placement(types: Sequence[str]) -> Callable[[Placement], Item]:
    def item(placement: Placement) -> Item:
        url = reverse("placement:placement-detail", args=[placement.pk])
        why = _condition_message(placement.status or {}, types)
        return Item(str(placement), url, f"{placement.hub.name} · {why}")

    return item


def _rolling(placement: Placement) -> Item:
    url = reverse("rollouts:placement-rollout", args=[placement.pk])
    rollout = (placement.status or {}).get("rollout") or {}
    failed = rollout.get("failed") or []
    if rollout.get("error"):
        why = f"round failed: {rollout['error']}"
    elif failed:
        why = f"failed on {', '.join(failed)}"
    else:
        why = f"round {rollout.get('round', 0)} on {rollout.get('resourceSnapshot', '')}"
    return Item(str(placement), url, f"{placement.hub.name} · {why}")


def _approval(request: ApprovalRequest) -> Item:
    url = _url("rollouts:approval-list", {"q": request.name})
    return Item(request.name, url, f"{request.hub.name} · stage {request.stage_name} of {request.run_name}")


def _run(run: StagedUpdateRun) -> Item:
    url = reverse("rollouts:run-detail", args=[run.pk])
    summary = RunSummary.of(run.status or {})
    progressing = summary.progressing or {}
    why = run.last_error or str(progressing.get("message") or progressing.get("reason") or "")
    stage = f"stage {summary.current_stage}" if summary.current_stage else ""
    return Item(run.name, url, " · ".join(filter(None, [run.hub.name, stage, why])))


def _failing_hub(superuser: bool) -> Callable[[Hub], Item]:
    def item(hub: Hub) -> Item:
        url = reverse("inventory:hub-detail", args=[hub.pk])
        return Item(hub.name, url, hub.last_sync_error if superuser else "the last sync failed")

    return item


# --- the page


def overview(user: roles.User) -> Overview:
    """The home page's cards and the last sync of each hub `user` sees."""
    clusters = roles.restrict(ManagedCluster.objects.for_listing(), user).only(
        "name", "kind", "stale", "availability", "hub__name"
    )
    placements = roles.restrict(Placement.objects.for_listing(), user).defer(*queries.LIST_DEFERRED)
    visible_runs = roles.restrict(
        StagedUpdateRun.objects.select_related("hub").order_by("hub__name", "name"), user
    )
    hubs = roles.restrict(Hub.objects.order_by("name"), user)
    superuser = roles.is_superuser(user)
    unavailable = ManagedCluster.Availability.UNAVAILABLE
    short = queries.filter_misconfigured(
        queries.filter_reported(queries.filter_satisfied(placements, False), True), False
    )
    cards = [
        _card(
            "unavailable-clusters",
            "Unavailable clusters",
            "Their hub reports them unavailable.",
            clusters.filter(availability=unavailable),
            _cluster,
            _url("inventory:cluster-list", {"availability": unavailable}),
        ),
        _card(
            "silent-clusters",
            "Stale clusters",
            "No heartbeat (availability unknown), or out of date because their hub's last sync failed.",
            clusters.filter(inventory_queries.NOT_REPORTING),
            _silent_cluster,
            _url("inventory:cluster-list", {"reporting": "false"}),
        ),
        _card(
            "short-placements",
            "Placements short of clusters",
            "Their scheduling condition says fewer clusters were selected than requested.",
            short,
            _placement(queries.SATISFIED_TYPES),
            _url(
                "placement:placement-list",
                {"satisfied": "false", "reported": "true", "misconfigured": "false"},
            ),
        ),
        _card(
            "misconfigured-placements",
            "Misconfigured placements",
            "The scheduler refuses their spec; they select nothing.",
            queries.filter_misconfigured(placements, True),
            _placement((queries.MISCONFIGURED_TYPE,)),
            _url("placement:placement-list", {"misconfigured": "true"}),
        ),
        _card(
            "pending-approvals",
            "Pending approvals",
            "Stages of staged update runs waiting for someone to approve them.",
            roles.restrict(
                ApprovalRequest.objects.filter(state=ApprovalRequest.State.PENDING)
                .select_related("hub")
                .order_by("created", "pk"),
                user,
            ),
            _approval,
            _url("rollouts:approval-list", {"state": ApprovalRequest.State.PENDING}),
        ),
        _card(
            "stuck-runs",
            "Stuck staged update runs",
            "Stuck or failed, or their last step failed and is being retried.",
            runs.filter_progress(visible_runs, runs.STUCK),
            _run,
            _url("rollouts:run-list", {"progress": runs.STUCK}),
        ),
        _card(
            "stuck-rolling-updates",
            "Stuck rolling updates",
            "The last round failed, or clusters failed to apply.",
            queries.filter_rollout(placements, queries.ROLLOUT_STUCK),
            _rolling,
            _url("placement:placement-list", {"rollout": queries.ROLLOUT_STUCK}),
        ),
        _card(
            "failing-hubs",
            "Hubs whose last sync failed",
            "Their clusters and placements are shown as of their last good sync.",
            hubs.filter(inventory_queries.hub_sync_state(inventory_queries.HUB_FAILING)),
            _failing_hub(superuser),
            _url("inventory:hub-list", {"state": inventory_queries.HUB_FAILING}),
        ),
        _card(
            "active-runs",
            "Staged update runs in progress",
            "Progressing, or waiting for an approval or a timed wait.",
            runs.filter_progress(visible_runs, runs.ACTIVE),
            _run,
            _url("rollouts:run-list", {"progress": runs.ACTIVE}),
            problem=False,
        ),
        _card(
            "active-rolling-updates",
            "Rolling updates in progress",
            "Dashboard-owned placements rolling clusters to their latest resources.",
            queries.filter_rollout(placements, queries.ROLLOUT_ACTIVE),
            _rolling,
            _url("placement:placement-list", {"rollout": queries.ROLLOUT_ACTIVE}),
            problem=False,
        ),
    ]
    running = roles.restrict(SyncRun.objects.filter(hub=OuterRef("pk"), state=SyncRun.State.RUNNING), user)
    listed: list[HubWithSyncing] = list(hubs.annotate(syncing=Exists(running))[: HUBS_SHOWN + 1])
    hub_count = len(listed) if len(listed) <= HUBS_SHOWN else hubs.count()
    synced = [
        HubSync(hub, hub.state, hub.last_synced_at, hub.syncing, hub.last_sync_error if superuser else "")
        for hub in listed[:HUBS_SHOWN]
    ]
    return Overview(cards, synced, hub_count)
