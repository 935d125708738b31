"""The demo hub's stand-in for a KubeFleet hub's controllers, for the rollout kinds.

Three controllers, all writing through the store like any client (so watchers see ordinary events):

* work apply: a Bound ClusterResourceBinding with a resource snapshot gets, for each new
  `metadata.generation`, the conditions kubefleet's work generator and work applier report
  (Overridden and WorkSynchronized at once, Applied after `apply_seconds`, Available after
  `available_seconds` more), or an Applied=False failure on clusters that are set to fail;
* staged update runs: every ClusterStagedUpdateRun is reconciled with the pure engine
  (`placement.scheduler.rollout.execution.reconcile_update_run`), and its step is applied: bindings
  updated or deleted, approval requests created and accepted, the run status written; a deleted
  run's approval requests are deleted with it;
* approvals of runs the hub does not have are accepted directly (ApprovalAccepted=True), as the run
  controller would once it reached them.

Every timestamp comes from the store's clock, so tests freeze it, `advance` it and call `reconcile()`.
"""

from __future__ import annotations

import logging
import random
import threading
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from demohub.store import ApiError, Store, rfc3339
from placement.scheduler.fleet.types import CRP_TRACKING_LABEL, PICK_FIXED, PICK_N, STATE_BOUND
from placement.scheduler.labels import parse_label_selector
from placement.scheduler.ocm.status import set_condition
from placement.scheduler.rollout.approval import APPROVED, accepted_condition, approval_state
from placement.scheduler.rollout.execution import (
    PolicySnapshot,
    UpdateRunInputs,
    UpdateRunStep,
    reconcile_update_run,
)
from placement.scheduler.rollout.staged import TARGET_UPDATE_RUN_LABEL
from placement.scheduler.timeutil import parse_time

logger = logging.getLogger(__name__)

# A MemberCluster labelled so always fails to apply whatever is placed on it.
APPLY_FAILS_LABEL = "demo.fleetui.io/apply-fails"
# A MemberCluster labelled so takes this many seconds to apply (instead of the hub's setting), which keeps
# a rollout over it in progress for a while.
APPLY_SECONDS_LABEL = "demo.fleetui.io/apply-seconds"
MAX_APPLY_SECONDS = 7 * 24 * 3600.0
# What an empty `spec.resourceSnapshotIndex` of a run resolves to (the demo hub keeps no
# ClusterResourceSnapshots); "1" when the placement has no such annotation.
LATEST_RESOURCE_INDEX_ANNOTATION = "demo.fleetui.io/latest-resource-snapshot-index"
DEFAULT_RESOURCE_INDEX = "1"

BINDING, RUN, APPROVAL = "ClusterResourceBinding", "ClusterStagedUpdateRun", "ClusterApprovalRequest"
OVERRIDDEN, WORK_SYNCHRONIZED, APPLIED, AVAILABLE = "Overridden", "WorkSynchronized", "Applied", "Available"
# the conditions the work generator resets whenever it syncs a binding (RolloutStarted is the rollout's)
WORK_CONDITIONS = (OVERRIDDEN, WORK_SYNCHRONIZED, APPLIED, AVAILABLE, "DiffReported")
APPLY_FAILED_REASON = "NotAllWorkHaveBeenApplied"
# Applied / Available False while a phase is still under way: the reasons upstream's rollout controller
# reads as in progress (any other False reason is a failure it rolls past).
APPLY_PENDING_REASON, NOT_AVAILABLE_YET_REASON = "ApplyPending", "ResourceNotAvailableYet"
MAX_SETTLE_PASSES = 100  # reconcile() gives up (and says so) if the controllers never settle


# ---- work apply -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApplySettings:
    """How simulated apply behaves: its delays and the share of (binding, generation) pairs that fail."""

    apply_seconds: float = 2.0
    available_seconds: float = 3.0
    failure_rate: float = 0.0
    seed: int = 0


def _condition(
    kind: str, status: str, reason: str, message: str, generation: int, at: datetime
) -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
        "lastTransitionTime": rfc3339(at),
    }


def _find(conditions: Iterable[Mapping[str, Any]], kind: str, generation: int) -> Mapping[str, Any] | None:
    """The condition of `kind` observed at `generation`, or None."""
    return next(
        (c for c in conditions if c.get("type") == kind and c.get("observedGeneration") == generation), None
    )


def _overridden(spec: Mapping[str, Any], generation: int, at: datetime) -> dict[str, Any]:
    """upstream work generator: NoOverrideSpecified unless the binding lists override snapshots."""
    if spec.get("clusterResourceOverrideSnapshots") or spec.get("resourceOverrideSnapshots"):
        return _condition(
            OVERRIDDEN,
            "True",
            "OverriddenSucceeded",
            "Successfully applied the override rules on the resources",
            generation,
            at,
        )
    return _condition(
        OVERRIDDEN,
        "True",
        "NoOverrideSpecified",
        "No override rules are configured for the selected resources",
        generation,
        at,
    )


def _failed_placements(
    placement: Mapping[str, Any] | None, failure: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The resources that "failed" on the cluster (every named resource the placement selects), at the
    time of the binding's Applied `failure`.

    Each carries the applier's manifest condition, which observes the object on the member cluster
    (never created here, so generation 0, left out as Go's omitempty does).
    """
    condition = {
        "type": APPLIED,
        "status": "False",
        "reason": "ManifestApplyFailed",
        "message": "Failed to apply the manifest (error: the demo hub simulates an apply failure here)",
        "lastTransitionTime": failure["lastTransitionTime"],
    }
    selectors = ((placement or {}).get("spec") or {}).get("resourceSelectors") or ()
    return [
        {
            "group": s.get("group", ""),
            "version": s.get("version", ""),
            "kind": s.get("kind", ""),
            "name": s["name"],
            "condition": condition,
        }
        for s in selectors
        if s.get("name")
    ]


def work_status(
    binding: Mapping[str, Any],
    *,
    now: datetime,
    fails: bool,
    settings: ApplySettings,
    placement: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The status the work generator and applier would report for `binding` at `now`; None: not Bound.

    Timestamps come from the phase boundaries (sync, sync + apply, + available), not from when
    this runs, so the result only depends on `now` and the binding.
    """
    spec = binding.get("spec") or {}
    if spec.get("state") != STATE_BOUND or not spec.get("resourceSnapshotName"):
        return None
    generation = binding["metadata"]["generation"]
    status = {k: v for k, v in (binding.get("status") or {}).items() if k != "failedPlacements"}
    conditions = status.get("conditions") or []
    synced = _find(conditions, WORK_SYNCHRONIZED, generation)
    synced_at = (parse_time(synced["lastTransitionTime"]) if synced else None) or now
    work = f"{_parent(binding)}-work"  # upstream names a placement's first Work `<crp>-work`
    status["conditions"] = [
        *(c for c in conditions if c.get("type") not in WORK_CONDITIONS),
        _overridden(spec, generation, synced_at),
        _condition(
            WORK_SYNCHRONIZED,
            "True",
            "AllWorkSynced",
            "All of the works are synchronized to the latest",
            generation,
            synced_at,
        ),
        *_apply_outcome(work, generation, now, synced_at, settings, fails),
    ]
    failure = _find(status["conditions"], APPLIED, generation) or {}
    if failure.get("reason") == APPLY_FAILED_REASON and (failed := _failed_placements(placement, failure)):
        status["failedPlacements"] = failed
    return status


def _apply_outcome(
    work: str, generation: int, now: datetime, synced_at: datetime, settings: ApplySettings, fails: bool
) -> list[dict[str, Any]]:
    """Applied (and Available once applied) as reported at `now`, each stamped when its phase began."""
    applied_at = synced_at + timedelta(seconds=settings.apply_seconds)
    available_at = applied_at + timedelta(seconds=settings.available_seconds)
    if now < applied_at:
        return [
            _condition(
                APPLIED, "False", APPLY_PENDING_REASON, "Resources are being applied", generation, synced_at
            )
        ]
    if fails:
        message = f"Work object {work} is not applied"
        return [_condition(APPLIED, "False", APPLY_FAILED_REASON, message, generation, applied_at)]
    applied = _condition(
        APPLIED,
        "True",
        "AllWorkHaveBeenApplied",
        "All corresponding work objects are applied",
        generation,
        applied_at,
    )
    if now < available_at:
        message = f"Work object {work} is not available"
        return [
            applied,
            _condition(AVAILABLE, "False", NOT_AVAILABLE_YET_REASON, message, generation, applied_at),
        ]
    message = "All corresponding work objects are available"
    return [applied, _condition(AVAILABLE, "True", "AllWorkAreAvailable", message, generation, available_at)]


def apply_fails(
    binding: Mapping[str, Any], member: Mapping[str, Any] | None, settings: ApplySettings
) -> bool:
    """Fails on a member labelled to fail, else by a draw seeded with (seed, binding, generation)."""
    if ((member or {}).get("metadata", {}).get("labels") or {}).get(APPLY_FAILS_LABEL) == "true":
        return True
    if settings.failure_rate <= 0:
        return False
    metadata = binding["metadata"]
    draw = random.Random(f"apply:{settings.seed}:{metadata['name']}:{metadata['generation']}").random()
    return draw < settings.failure_rate


def member_settings(member: Mapping[str, Any] | None, settings: ApplySettings) -> ApplySettings:
    """The hub's apply settings, with the member's own apply time when it is labelled with one."""
    labelled = ((member or {}).get("metadata", {}).get("labels") or {}).get(APPLY_SECONDS_LABEL, "")
    try:
        seconds = float(labelled)
    except ValueError:
        return settings
    return replace(settings, apply_seconds=seconds) if 0 <= seconds <= MAX_APPLY_SECONDS else settings


# ---- staged update runs -------------------------------------------------------------------------


def policy_snapshot(
    placement: Mapping[str, Any] | None, bindings: Sequence[Mapping[str, Any]]
) -> PolicySnapshot | None:
    """The placement's latest policy snapshot, which the demo hub does not store, read off its bindings.

    Its index is the highest `<crp>-<index>` any binding names (0 without bindings); it is always
    Scheduled, and the observed count follows the placement's policy as upstream records it.
    """
    if placement is None:
        return None
    name = placement["metadata"]["name"]
    prefix = f"{name}-"
    indexes = [
        int(suffix)
        for b in bindings
        if (snapshot := (b.get("spec") or {}).get("schedulingPolicySnapshotName") or "").startswith(prefix)
        and (suffix := snapshot[len(prefix) :]).isdigit()
    ]
    index = str(max(indexes, default=0))
    policy = (placement.get("spec") or {}).get("policy") or {}
    placement_type = policy.get("placementType")
    observed = (
        policy.get("numberOfClusters") or 0
        if placement_type == PICK_N
        else len(policy.get("clusterNames") or ())
        if placement_type == PICK_FIXED
        else None
    )
    return PolicySnapshot(
        name=f"{name}-{index}", index=index, scheduled=True, observed_cluster_count=observed
    )


@dataclass(frozen=True)
class _RunView:
    """What one run's reconcile reads, but the member clusters (read only when it really runs)."""

    run: dict[str, Any]
    strategy: dict[str, Any] | None
    placement: dict[str, Any] | None
    bindings: list[dict[str, Any]]
    approvals: dict[str, dict[str, Any]]

    @property
    def fingerprint(self) -> tuple[str, ...]:
        """Changes whenever an input object does, like the watch events that trigger a controller; the
        run itself only when its generation does, as upstream's controller watches runs with a
        generation-changed predicate. A reconcile writes the run's status (a waiting run's condition
        gets a new time each pass), so with its resourceVersion here every status write set off the next
        reconcile: once a second, each reading every member cluster (about 0.4 of a core at 50,000)."""
        objects = [self.strategy, self.placement, *self.bindings, *self.approvals.values()]
        generation = str(self.run["metadata"].get("generation", ""))
        return (generation, *(o["metadata"]["resourceVersion"] if o else "-" for o in objects))


@dataclass
class _RunState:
    fingerprint: tuple[str, ...]
    due: datetime | None  # the requeue time; None: only when an input changes

    def due_by(self, now: datetime) -> bool:
        return self.due is not None and now >= self.due


class StepConflict(Exception):
    """An input changed under the step (409/404): drop the rest and reconcile again at once."""


class FleetSimulator:
    """Plays the hub's controllers on a store: one `tick()` is one pass, `reconcile()` settles them."""

    def __init__(
        self, store: Store, settings: ApplySettings | None = None, *, log_events: bool = True
    ) -> None:
        self.store = store
        self.settings = settings or ApplySettings()
        self._log_events = log_events
        self.events: deque[str] = deque(maxlen=1000)  # what the controllers did, newest last
        self._runs: dict[str, _RunState] = {}
        self._known_runs: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- driving ------------------------------------------------------------------------------

    def tick(self) -> list[str]:
        """One pass of every controller; a run is reconciled when an input changed or its requeue is due."""
        with self._lock:
            return self._pass(force=False)

    def reconcile(self) -> list[str]:
        """Let every controller act at the current time until nothing changes; answers what they did."""
        done: list[str] = []
        with self._lock:
            for _ in range(MAX_SETTLE_PASSES):
                before = self.store.resource_version
                done += self._pass(force=True)
                if self.store.resource_version == before:
                    return done
        logger.warning("the demo hub's controllers did not settle in %d passes", MAX_SETTLE_PASSES)
        return done

    def start(self, interval: float) -> None:
        """Tick every `interval` seconds of real time in a background thread."""

        def loop() -> None:
            while not self._stop.wait(interval):
                try:
                    self.tick()
                except Exception:  # a malformed object must not stop the controllers for good
                    logger.exception("the demo hub's controllers failed a pass")

        self._thread = threading.Thread(target=loop, name="demo-hub-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _pass(self, *, force: bool) -> list[str]:
        now = self.store.clock()
        done = self._apply_work(now)
        runs = {r["metadata"]["name"]: r for r in self.store.list(RUN).items}
        done += self._forget_deleted_runs(set(runs))
        for run in runs.values():
            done += self._reconcile_run(run, now, force=force)
        done += self._accept_orphan_approvals(set(runs), now)
        for sentence in done:
            logger.log(
                logging.INFO if self._log_events else logging.DEBUG, "demo hub controllers: %s", sentence
            )
        self.events.extend(done)
        return done

    # ---- work apply ---------------------------------------------------------------------------

    def _apply_work(self, now: datetime) -> list[str]:
        done = []
        for binding in self.store.list(BINDING).items:
            if (sentence := self._apply_binding(binding, now)) is not None:
                done.append(sentence)
        return done

    def _apply_binding(self, binding: dict[str, Any], now: datetime) -> str | None:
        spec, name = binding.get("spec") or {}, binding["metadata"]["name"]
        if spec.get("state") != STATE_BOUND or _settled(binding):
            return None
        # read, not copied: this runs for every binding still applying, every pass
        member = self.store.read("MemberCluster", spec.get("targetCluster", ""))
        placement = self.store.read("ClusterResourcePlacement", _parent(binding))
        settings = member_settings(member, self.settings)
        fails = apply_fails(binding, member, settings)
        status = work_status(binding, now=now, fails=fails, settings=settings, placement=placement)
        if status is None or status == binding.get("status"):
            return None
        try:
            self._write_status(BINDING, binding, status, handed_over=True)
        except ApiError as error:  # changed or deleted meanwhile: the next pass sees the new version
            logger.debug("work status of %s skipped: %s", name, error.message)
            return None
        latest = {c["type"]: c for c in status["conditions"]}
        shown = latest.get(AVAILABLE) or latest[APPLIED]
        return f"binding {name}: {shown['type']}={shown['status']} ({shown['reason']})"

    # ---- approvals ----------------------------------------------------------------------------

    def _accept_orphan_approvals(self, runs: set[str], now: datetime) -> list[str]:
        """Accept approved requests whose run is not on this hub (a run's own are its engine's job)."""
        done = []
        for request in self.store.list(APPROVAL).items:
            if _request_run(request) in runs or approval_state(request) != APPROVED:
                continue
            generation = request["metadata"]["generation"]
            conditions = (request.get("status") or {}).get("conditions") or []
            status = {
                **(request.get("status") or {}),
                "conditions": set_condition(conditions, accepted_condition(generation, now), now),
            }
            try:
                self._write_status(APPROVAL, request, status)
            except ApiError as error:
                logger.debug("acceptance of %s skipped: %s", request["metadata"]["name"], error.message)
                continue
            done.append(f"approval request {request['metadata']['name']}: approval accepted")
        return done

    def _forget_deleted_runs(self, runs: set[str]) -> list[str]:
        """A deleted run takes its approval requests with it, as the run controller's finalizer does."""
        done = []
        for gone in sorted(self._known_runs - runs):
            self._runs.pop(gone, None)
            for request in self.store.list(APPROVAL).items:
                if _request_run(request) == gone:
                    name = request["metadata"]["name"]
                    try:
                        self.store.delete(APPROVAL, name)
                    except ApiError:
                        continue
                    done.append(f"approval request {name} deleted with its run {gone}")
        self._known_runs = runs
        return done

    # ---- staged update runs -------------------------------------------------------------------

    def _reconcile_run(self, run: dict[str, Any], now: datetime, *, force: bool) -> list[str]:
        name = run["metadata"]["name"]
        view = self._view(run)
        state = self._runs.get(name)
        if (
            not force
            and state is not None
            and state.fingerprint == view.fingerprint
            and not state.due_by(now)
        ):
            return []
        try:
            step = reconcile_update_run(self._inputs(view), now)
        except Exception:  # a bug in the engine must not stop the hub: log it and retry later
            logger.exception("the staged update run engine failed on %s", name)
            self._runs[name] = _RunState(view.fingerprint, now + timedelta(seconds=15))
            return []
        try:
            self._apply_step(view, step)
        except StepConflict as conflict:
            self._runs[name] = _RunState(view.fingerprint, now)
            return [f"run {name}: {conflict}; retrying"]
        self._runs[name] = _RunState(
            view.fingerprint, now + step.requeue_after if step.requeue_after else None
        )
        return [f"run {name}: {event}" for event in step.events]

    def _view(self, run: dict[str, Any]) -> _RunView:
        spec = run.get("spec") or {}
        name, placement_name = run["metadata"]["name"], spec.get("placementName", "")
        selector = parse_label_selector({"matchLabels": {CRP_TRACKING_LABEL: placement_name}})
        prefix = f"{name}-"  # approval requests are named <run>-before-<stage> / <run>-after-<stage>
        return _RunView(
            run=run,
            strategy=self._get("ClusterStagedUpdateStrategy", spec.get("stagedRolloutStrategyName", "")),
            placement=self._get("ClusterResourcePlacement", placement_name),
            bindings=self.store.list(BINDING, selector=selector).items,
            approvals={
                r["metadata"]["name"]: r
                for r in self.store.list(APPROVAL).items
                if r["metadata"]["name"].startswith(prefix)
            },
        )

    def _inputs(self, view: _RunView) -> UpdateRunInputs:
        annotations = ((view.placement or {}).get("metadata") or {}).get("annotations") or {}
        return UpdateRunInputs(
            run=view.run,
            strategy=view.strategy,
            placement=view.placement,
            policy_snapshot=policy_snapshot(view.placement, view.bindings),
            bindings=view.bindings,
            member_clusters=self.store.list("MemberCluster").items,
            approval_requests=view.approvals,
            latest_resource_snapshot_index=annotations.get(
                LATEST_RESOURCE_INDEX_ANNOTATION, DEFAULT_RESOURCE_INDEX
            ),
        )

    def _apply_step(self, view: _RunView, step: UpdateRunStep) -> None:
        """Side effects first, the run status last, as the upstream controller orders its writes."""
        bindings = {b["metadata"]["name"]: b for b in view.bindings}
        try:
            for name in step.bindings_to_delete:
                self.store.delete(BINDING, name)
            for update in step.binding_updates:
                current = bindings.get(update.name)
                if current is None:
                    raise StepConflict(f"binding {update.name} is gone")
                written = self.store.replace(BINDING, update.name, {**current, "spec": update.spec})
                status = {**(written.get("status") or {}), "conditions": list(update.conditions)}
                self._write_status(BINDING, written, status)
            for request in step.approvals_to_create:
                self.store.create({k: v for k, v in request.items() if k != "status"})
            for acceptance in step.approvals_to_accept:
                current = view.approvals.get(acceptance.name)
                if current is None:
                    raise StepConflict(f"approval request {acceptance.name} is gone")
                self._write_status(APPROVAL, current, acceptance.status)
            self._write_status(RUN, view.run, step.status)
        except ApiError as error:
            raise StepConflict(error.message) from error

    # ---- store helpers ------------------------------------------------------------------------

    def _get(self, kind: str, name: str) -> dict[str, Any] | None:
        if not name:
            return None
        try:
            return self.store.get(kind, name)
        except ApiError:
            return None

    def _write_status(
        self, kind: str, current: Mapping[str, Any], status: dict[str, Any], *, handed_over: bool = False
    ) -> dict[str, Any]:
        """Replace the status subresource, on the version read (409 Conflict if it moved on);
        `handed_over`: `status` is built for this write alone and the answer is not changed (no copies)."""
        metadata = current["metadata"]
        body = {
            "metadata": {"name": metadata["name"], "resourceVersion": metadata["resourceVersion"]},
            "status": status,
        }
        return self.store.replace(kind, metadata["name"], body, subresource="status", handed_over=handed_over)


def _settled(binding: Mapping[str, Any]) -> bool:
    """Applied failed, or Available True, at the binding's generation: nothing more will happen."""
    generation = binding["metadata"]["generation"]
    conditions = (binding.get("status") or {}).get("conditions") or []
    available = _find(conditions, AVAILABLE, generation)
    applied = _find(conditions, APPLIED, generation)
    return bool(
        (available and available.get("status") == "True")
        or (applied and applied.get("reason") == APPLY_FAILED_REASON)
    )


def _parent(binding: Mapping[str, Any]) -> str:
    parent: str = (binding["metadata"].get("labels") or {}).get(CRP_TRACKING_LABEL, "")
    return parent


def _request_run(request: Mapping[str, Any]) -> str:
    labels = request["metadata"].get("labels") or {}
    spec = request.get("spec") or {}
    run: str = labels.get(TARGET_UPDATE_RUN_LABEL) or spec.get("parentStageRollout", "")
    return run


# ---- seeding ------------------------------------------------------------------------------------

SEED_HISTORY = timedelta(minutes=40)  # how long ago the seeded rollout objects were created
SEED_STEP_SECONDS = 15.0  # the run controller's recheck interval while clusters update
SEED_APPLY = ApplySettings(apply_seconds=20.0, available_seconds=10.0)


def seed_rollout(store: Store, objects: Sequence[dict[str, Any]], history: timedelta = SEED_HISTORY) -> None:
    """Create `objects` `history` ago and play the hub's controllers forward to now.

    The seeded runs are then exactly what the controller makes of them, so a hub with controllers
    carries on from there. Playing stops early (the clock jumps to now) once every run waits for
    an approval or is finished.
    """
    simulator = FleetSimulator(store, SEED_APPLY, log_events=False)  # history, not news
    remaining = history.total_seconds()
    store.clock.advance(-remaining)
    try:
        for obj in objects:
            store.create(obj)
        while remaining > 0:
            simulator.reconcile()
            if _runs_at_rest(store):
                break
            step = min(SEED_STEP_SECONDS, remaining)
            store.clock.advance(step)
            remaining -= step
    finally:
        store.clock.advance(remaining)
    simulator.reconcile()


def _runs_at_rest(store: Store) -> bool:
    """Every run waits on a pending approval request, or has finished (or failed to initialise)."""
    pending = {_request_run(r) for r in store.list(APPROVAL).items if approval_state(r) != APPROVED}
    return all(run["metadata"]["name"] in pending or _finished(run) for run in store.list(RUN).items)


def _finished(run: Mapping[str, Any]) -> bool:
    conditions = {c.get("type"): c.get("status") for c in (run.get("status") or {}).get("conditions") or ()}
    return "Succeeded" in conditions or conditions.get("Initialized") == "False"
