"""Mirror a hub into the database: paged lists, bulk upserts, deletions only after complete lists.

`sync_hub` is the full re-list (Celery task, `sync_hubs`, a watch's re-list after 410 Gone); a kind the
hub refuses to list (its verb not granted, its CRD not installed) is recorded with the hub's reason in
the run and the other kinds are synced all the same;
`apply_events` is the path watch events take, a burst of them in one transaction (`apply_event` for
one). Both write through `KindRows`, which stores no object that fails inventory.validation: such an
object is recorded as an inventory.RejectedObject, and its last valid row (if any) is kept as it was.
"""

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, cast

from django.db import IntegrityError, models, transaction
from django.db.models import Q
from django.utils import timezone

from inventory import bulk, changes, kinds, memberships, rejections, relevance, validation
from inventory.hubclient import GoneError, HubClient, HubError, Kind, TransientHubError, served_kinds
from inventory.models import Hub, ManagedCluster, Owner, SyncRun
from inventory.objects import UNCOMPARED, InvalidManifest, Row, is_managed
from placement.scheduler.documents import Document

logger = logging.getLogger(__name__)

PAGE_LIMIT = 500
BATCH = 500
# A continue token that expires mid-list (410 Gone) restarts that kind's list this often.
GONE_RESTARTS = 3
# A refusal of one kind's list that leaves the other kinds listable: the token lacks `list` on it
# (403 Forbidden), or the hub does not serve it (404 Not Found, its CRD is not installed). Any other
# failure (the hub down, the token refused as a whole) ends the sync.
KIND_REFUSALS = (403, 404)
NAME_LENGTH = cast(int, ManagedCluster._meta.get_field("name").max_length)


class SyncFailed(HubError):
    """A sync that failed; `sync_run` is the failed SyncRun, `cause` the hub error."""

    def __init__(self, cause: HubError, sync_run: SyncRun) -> None:
        super().__init__(str(cause), cause.status)
        self.cause = cause
        self.sync_run = sync_run


Record = dict[str, Any]
# (namespace or "" for a cluster-scoped kind, name) of a hub object
Identity = tuple[str, str]
# (pk, uid, resourceVersion) of a stored row
Version = tuple[int, str, str]


def _key(lookup: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted(lookup.items()))


def _record(row: Row, by_uid: dict[str, Record], by_key: dict[tuple[Any, ...], Record]) -> Record | None:
    """The stored record of `row`: the one of its uid, else the one of its lookup."""
    return by_uid.get(row.values.get("uid") or "") or by_key.get(_key(row.lookup))


class KindRows:
    """The stored rows of one kind of one hub: upsert objects in bulk, delete what vanished.

    `run` is the sync listing them (None for watch events); `rejected` counts the objects refused.
    A sync compares each listed object's uid and resourceVersion with the stored row's (`versions`, read
    once per list) and skips an object the hub has not rewritten since it was stored: an unchanged hub
    costs no row building, query or write per object. So a change to how rows are built reaches the rows
    of unchanged objects only through a data migration (clearing their `resource_version` is enough:
    the next sync then compares them field by field).
    """

    def __init__(self, hub: Hub, kind: Kind, log: changes.ChangeLog, run: SyncRun | None = None) -> None:
        self.hub, self.kind, self.log, self.run = hub, kind, log, run
        self.handler = kinds.HANDLERS[(kind.group, kind.name)]
        self.model: type[models.Model] = self.handler.model
        self.rows = self.model._default_manager.filter(hub=hub, **self.handler.scope)
        self.owned = any(f.name == "owner" for f in self.model._meta.concrete_fields)
        if self.owned:
            # dashboard-owned placements and their decisions belong to the hub but are not mirrored from it
            self.rows = self.rows.filter(owner=Owner.HUB)
        self.has_uid = any(f.name == "uid" for f in self.model._meta.concrete_fields)
        # A child's row also holds its parent's key, which can change while the child's version does
        # not (its parent stored after it): such kinds are compared field by field.
        self.versioned = (
            self.has_uid
            and not self.handler.has_parents
            and any(f.name == "resource_version" for f in self.model._meta.concrete_fields)
        )
        # the stored rows of a versioned kind by identity and by uid, read when a sync's list starts; None
        # otherwise (watch events look their few rows up by query)
        self.versions: dict[Identity, Version] | None = None
        self.uids: dict[str, int] = {}
        self.seen: set[int] = set()
        self.listed = 0
        self.rejected = 0
        # the objects this dashboard wrote (never mirrored), whose status the hub reports back to it
        self.managed: list[dict[str, Any]] = []
        # identities of this kind's objects recorded as rejected, cleared when a valid version arrives
        self.known_rejections = rejections.known(hub, kind.name)

    def _to_rows(
        self, objects: Iterable[dict[str, Any]]
    ) -> tuple[list[Row], list[rejections.Rejection], list[int]]:
        """Rows keyed by their lookup (a repeated object keeps its last copy), the objects refused (those
        that break a limit of inventory.validation or whose fields have the wrong type), and the pks of
        the stored rows of the objects the hub has not rewritten."""
        rows: dict[tuple[Any, ...], Row] = {}
        refused: list[rejections.Rejection] = []
        unchanged: list[int] = []
        # the last copy of a named object, before any is compared with its row
        last: dict[object, tuple[int, Any]] = {}
        for number, obj in enumerate(objects, start=1):
            last[_identity(obj) if _metadata(obj).get("name") else number] = (number, obj)
        for number, obj in last.values():
            if is_managed(_labels(obj)):
                # written by this dashboard from its own rows (bindings, published decisions): not mirrored
                self.managed.append(obj)
                continue
            if (pk := self._unchanged(obj)) is not None:
                unchanged.append(pk)
                continue
            document = Document(f"hub {self.hub.name} {self.kind.name}", number, obj)
            try:
                if found := validation.problems(self.kind.name, obj, namespaced=self.handler.namespaced):
                    raise InvalidManifest(validation.reason(found))
                row = self.handler.to_row(document)
            except Exception as exc:  # noqa: BLE001 - any object the row builders choke on is refused alone
                namespace, name = _identity(obj)
                why = str(exc) if isinstance(exc, InvalidManifest) else f"{type(exc).__name__}: {exc}"
                why = why[: rejections.MAX_REASON]
                shown = validation.shown(f"{namespace}/{name}" if namespace else name)
                logger.warning("hub %s: skipped %s %s: %s", self.hub.name, self.kind.name, shown, why)
                refused.append(rejections.Rejection(self.kind.name, namespace, name, why))
                continue
            rows[_key(row.lookup)] = row
        return self._with_parents(self._without_shadowed(list(rows.values()))), refused, unchanged

    def _unchanged(self, obj: Any) -> int | None:
        """The pk of the stored row of `obj` when the hub has not rewritten it since (same uid and
        resourceVersion) and no rejection of it is recorded; None when it must be compared."""
        if self.versions is None:
            return None
        namespace, name = _identity(obj)
        stored = self.versions.get((namespace if self.handler.namespaced else "", name))
        if stored is None or (
            self.known_rejections and rejections.identity(namespace, name) in self.known_rejections
        ):
            return None
        pk, uid, version = stored
        metadata = _metadata(obj)
        same = version and (uid, version) == (metadata.get("uid"), metadata.get("resourceVersion"))
        return pk if same else None

    def _without_shadowed(self, rows: list[Row]) -> list[Row]:
        """Rows whose name a dashboard-owned row already holds on this hub are left out (with a warning):
        placements, strategies, runs and approval requests are unique per hub whoever owns them."""
        if not rows or not self.owned:
            return rows
        names = {row.lookup["name"] for row in rows}
        owned = self.model._default_manager.filter(
            hub=self.hub, owner=Owner.DASHBOARD, name__in=names, **self.handler.scope
        )
        taken = {_key(lookup) for lookup in owned.values(*rows[0].lookup)}
        for row in rows:
            if _key(row.lookup) in taken:
                logger.warning(
                    "hub %s: %s %s not mirrored: a dashboard-owned object has that name",
                    self.hub.name,
                    self.kind.name,
                    row.lookup["name"],
                )
        return [row for row in rows if _key(row.lookup) not in taken]

    def _with_parents(self, rows: list[Row]) -> list[Row]:
        """Children (decisions, bindings, runs, approval requests) point at their hub-owned parent row."""
        return self.handler.link_parents(self.hub, rows)

    def _stored(
        self, rows: list[Row], compared: Iterable[str] | None = None
    ) -> tuple[dict[str, Record], dict[tuple[Any, ...], Record]]:
        """Stored records of these objects, by uid and by lookup: their pk, lookup and the fields
        `compared` (by default every field of the rows but UNCOMPARED)."""
        if compared is None:
            compared = (f for f in rows[0].values if f not in UNCOMPARED)
        fields = ["pk", *rows[0].lookup, *compared]
        uids = {row.values.get("uid") for row in rows} - {None, ""}
        if self.has_uid and uids:
            fields.append("uid")
        if self.versions is not None:
            pks = {self.uids[uid] for uid in uids if uid in self.uids}
            pks.update(stored[0] for row in rows if (stored := self.versions.get(self._row_identity(row))))
            if not pks:
                return {}, {}
            match = Q(pk__in=pks)
        else:
            # by name and namespace: a name alone (every add-on score of a kind shares one) matches the hub
            match = Q(name__in={row.lookup["name"] for row in rows})
            if self.handler.namespaced:
                match &= Q(namespace__in={row.lookup["namespace"] for row in rows})
            if self.has_uid and uids:
                match |= Q(uid__in=uids)
        records = list(self.rows.filter(match).values(*dict.fromkeys(fields)))
        by_uid = {r["uid"]: r for r in records if r.get("uid")}
        by_key = {_key({k: r[k] for k in rows[0].lookup}): r for r in records}
        return by_uid, by_key

    def upsert(self, objects: Iterable[dict[str, Any]]) -> tuple[int, int]:
        """Create or update the rows of `objects`; answers (added, updated). Unchanged rows stay as is, and
        so do the rows of refused objects (recorded as rejected)."""
        rows, refused, unchanged = self._to_rows(objects)
        self.seen.update(unchanged)
        self.listed += len(rows) + len(unchanged)
        self.rejected += len(refused)
        try:
            with transaction.atomic():
                return self._write(rows, refused)
        except IntegrityError as exc:
            # another writer (the binding editor, a re-list) inserted one of these rows after they were
            # read: the write was rolled back to its savepoint, and reading again finds that row
            logger.info(
                "hub %s: %s written meanwhile (%s); writing again", self.hub.name, self.kind.name, exc
            )
            if self.versions is not None:
                self._read_versions()
            with transaction.atomic():
                return self._write(rows, refused)

    def _write(self, rows: list[Row], refused: list[rejections.Rejection]) -> tuple[int, int]:
        """One attempt of `upsert`, in its transaction; nothing of it is remembered unless it commits."""
        rejections.record(self.hub, self.kind.name, refused, self.run)
        kept = self._stored_pks(
            [self._lookup(r.namespace, r.name) for r in refused if _storable(r.namespace, r.name)]
        )
        accepted = {rejections.identity(row.lookup.get("namespace", ""), row.lookup["name"]) for row in rows}
        rejections.clear(self.hub, self.kind.name, accepted & self.known_rejections)
        if not rows:
            self.seen.update(kept)
            return 0, 0
        fields = [*rows[0].lookup, *rows[0].values]
        now = timezone.now()
        # (pk, new values) of the updates no scheduler notices, told from the fields (a heartbeat)
        noise, rows = self._heartbeats(rows, kept, now)
        by_uid, by_key = self._stored(rows) if rows else ({}, {})
        create: list[bulk.Values] = []
        update: list[models.Model] = []
        # (before, after) of each updated row, for the change log
        logged: list[tuple[models.Model, models.Model]] = []
        for row in rows:
            record = _record(row, by_uid, by_key)
            if record is None:
                create.append({"hub": self.hub, **row.lookup, **row.values})
                continue
            kept.add(record["pk"])
            differing = [f for f, value in row.values.items() if f not in UNCOMPARED and record[f] != value]
            if not differing:
                continue
            if self.handler.noise is not None and self.handler.noise(differing, record, row.values, now):
                noise.append((record["pk"], row.values))
                continue
            update.append(self.model(pk=record["pk"], hub=self.hub, **row.lookup, **row.values))
            logged.append((self.model(hub=self.hub, **record), update[-1]))
        created = bulk.insert(self.model, create)
        _update(self.model, update, fields)
        self._store_noise(noise)
        self.seen.update(kept, created)
        self.log.record_added(self.model, create, created)
        for old, new in logged:
            self.log.record(old, new)
        return len(create), len(update) + len(noise)

    def _heartbeats(
        self, rows: list[Row], kept: set[int], now: datetime
    ) -> tuple[list[tuple[int, dict[str, Any]]], list[Row]]:
        """The heartbeats among `rows` told from their stored rows' digest and heartbeat fields alone
        (`relevance.DIGEST_FIELD`), as (pk, new values), and the rows left to compare field by field: those
        of a kind without noise, without a stored row or digest, whose digest moved, or whose change is
        more than a heartbeat. The pks of the rows told go to `kept`; an unchanged one is not written."""
        noise_of = self.handler.noise
        if noise_of is None:
            return [], rows
        by_uid, by_key = self._stored(rows, [relevance.DIGEST_FIELD, *relevance.HEARTBEAT_FIELDS])
        noise: list[tuple[int, dict[str, Any]]] = []
        left: list[Row] = []
        for row in rows:
            record = _record(row, by_uid, by_key)
            digest = row.values.get(relevance.DIGEST_FIELD)
            if (
                record is None
                or not digest
                or record[relevance.DIGEST_FIELD] != digest
                or any(record[field] != value for field, value in row.lookup.items())
            ):
                left.append(row)
                continue
            differing = [f for f in relevance.HEARTBEAT_FIELDS if record[f] != row.values[f]]
            if differing and not noise_of(differing, record, row.values, now):
                left.append(row)
                continue
            kept.add(record["pk"])
            if differing:
                noise.append((record["pk"], row.values))
        return noise, left

    def _store_noise(self, noise: list[tuple[int, dict[str, Any]]]) -> None:
        """Write the fields a change no scheduler notices can touch (`relevance.HEARTBEAT_FIELDS`, and the
        fields every write sets), from the new values by pk in one bulk update: no row instance on either
        side, no scheduler input built. The change log only counts them."""
        if not noise:
            return
        fields = sorted(relevance.HEARTBEAT_FIELDS | UNCOMPARED)
        bulk.update(self.model, fields, [(pk, [values[f] for f in fields]) for pk, values in noise])
        self.log.noise += len(noise)

    def _lookup(self, namespace: str, name: str) -> dict[str, Any]:
        """The lookup of an object by its metadata (the row builders' lookups without the row)."""
        return (
            self.handler.scope
            | {"name": name}
            | ({"namespace": namespace} if self.handler.namespaced else {})
        )

    def _stored_pks(self, lookups: list[dict[str, Any]]) -> set[int]:
        match = Q()
        for lookup in lookups:
            match |= Q(**lookup)
        return set(self.rows.filter(match).values_list("pk", flat=True)) if lookups else set()

    def delete(self, objects: Iterable[dict[str, Any]]) -> int:
        """Delete the rows of `objects` (a watch's DELETED events), valid or not, and their rejections.
        They are found by metadata alone: a deleted object's other fields do not matter."""
        found: list[Row] = []
        identities: set[str] = set()
        for obj in objects:
            if is_managed(_labels(obj)):
                continue
            namespace, name = _identity(obj)
            identities.add(rejections.identity(namespace, name))
            if not _storable(namespace, name):
                continue  # never stored: only its rejection goes
            uid = _metadata(obj).get("uid")
            uid = uid if isinstance(uid, str) and _storable(uid) else ""
            found.append(Row(self.model, self._lookup(namespace, name), {"uid": uid} if self.has_uid else {}))
        rejections.clear(self.hub, self.kind.name, identities)
        if not found:
            return 0
        by_uid, by_key = self._stored(found)
        pks = [record["pk"] for row in found if (record := _record(row, by_uid, by_key))]
        return self._delete(pks)

    def delete_unseen(self) -> int:
        """Delete the rows no list returned; only call after every list of the sync completed."""
        return self._delete([pk for pk in self.rows.values_list("pk", flat=True) if pk not in self.seen])

    def _delete(self, pks: list[int]) -> int:
        with transaction.atomic():
            for start in range(0, len(pks), BATCH):
                chunk = self.model._default_manager.filter(pk__in=pks[start : start + BATCH])
                for old in chunk:
                    self.log.record(old, None)
                chunk.delete()
        return len(pks)

    def restart(self) -> None:
        """A list starting (again after 410 Gone): only what this list returns counts as seen, compared
        with the rows stored now."""
        self.seen.clear()
        self.listed = 0
        if self.versioned:
            self._read_versions()

    def _read_versions(self) -> None:
        namespace = "namespace" if self.handler.namespaced else models.Value("")
        rows = self.rows.values_list("pk", namespace, "name", "uid", "resource_version")
        self.versions = {
            (row_namespace, name): (pk, uid, version) for pk, row_namespace, name, uid, version in rows
        }
        self.uids = {uid: pk for pk, uid, _ in self.versions.values() if uid}

    def _row_identity(self, row: Row) -> Identity:
        return (row.lookup["namespace"] if self.handler.namespaced else "", row.lookup["name"])


def _update(model: type[models.Model], rows: list[models.Model], fields: list[str]) -> None:
    """Write `fields` of these rows by pk, from the instances' values (`bulk.update`)."""
    attnames = [field.attname for field in bulk.concrete(model, fields)]
    bulk.update(model, fields, [(row.pk, [getattr(row, name) for name in attnames]) for row in rows])


def _metadata(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _labels(obj: Any) -> dict[str, Any] | None:
    labels = _metadata(obj).get("labels")
    return labels if isinstance(labels, dict) else None


def _storable(*texts: str) -> bool:
    """Whether these names fit the name columns and hold no NUL character (which PostgreSQL refuses even
    in a query), so rows can be looked up by them."""
    return all(len(text) <= NAME_LENGTH and "\x00" not in text for text in texts)


def _identity(obj: Any) -> tuple[str, str]:
    """(namespace, name) of any object, as text whatever their types ("" when missing)."""
    metadata = _metadata(obj)
    namespace, name = metadata.get("namespace"), metadata.get("name")
    return ("" if namespace is None else str(namespace)), ("" if name is None else str(name))


def object_name(obj: Any) -> str:
    """`namespace/name` (or `name`) of any object, for logs and for telling objects apart."""
    if not _metadata(obj):
        return "<no metadata>"
    namespace, name = _identity(obj)
    return f"{namespace}/{name}" if namespace else name


def _list_kind(
    client: HubClient, table: KindRows, run: SyncRun, page_limit: int, heartbeat: Callable[[], None]
) -> str:
    """List every page of one kind into `table`; answers the list's resourceVersion."""
    for attempt in range(1, GONE_RESTARTS + 1):
        table.restart()
        counts = run.kinds[table.kind.name]
        counts["listed"] = 0
        resource_version = ""
        try:
            for page in client.list_pages(table.kind, page_limit):
                resource_version = resource_version or page.resource_version
                rejected = table.rejected
                added, updated = table.upsert(page.items)
                counts["done"] = not page.continue_token
                _count_page(run, counts, table.listed, added, updated, table.rejected - rejected)
                heartbeat()
            return resource_version
        except GoneError:
            if attempt == GONE_RESTARTS:
                raise
            logger.info("hub %s: %s list expired (410 Gone); listing again", table.hub.name, table.kind.name)
    raise AssertionError("unreachable")


def _new_counts() -> dict[str, Any]:
    return {"listed": 0, "added": 0, "updated": 0, "removed": 0, "rejected": 0, "done": False}


def _count_page(
    run: SyncRun, counts: dict[str, int], listed: int, added: int, updated: int, rejected: int
) -> None:
    """Committed per page so the UI can show progress while the sync runs; it is the run's heartbeat too."""
    counts["listed"] = listed
    counts["added"] += added
    counts["updated"] += updated
    counts["rejected"] = counts.get("rejected", 0) + rejected
    run.pages += 1
    run.added += added
    run.updated += updated
    run.rejected += rejected
    run.heartbeat_at = timezone.now()
    run.save(update_fields=["pages", "added", "updated", "rejected", "kinds", "heartbeat_at"])


def sync_hub(
    hub: Hub,
    *,
    trigger: str,
    heartbeat: Callable[[], None] = lambda: None,
    page_limit: int = PAGE_LIMIT,
) -> SyncRun:
    """List every kind the hub serves into the database; raises SyncFailed after recording a failure.

    Nothing of a kind is deleted unless its list completed, and nothing at all when the hub failed
    as a whole (a failure marks the hub's clusters stale). A kind the hub refuses (KIND_REFUSALS) is
    recorded in the run with the hub's reason while the other kinds sync, and the run fails with it.
    """
    run = SyncRun.objects.create(hub=hub, trigger=trigger)
    log = changes.ChangeLog()
    versions: dict[str, str] = {}
    refused: dict[str, HubError] = {}
    started = time.monotonic()
    try:
        with HubClient(hub) as client:
            tables = [KindRows(hub, kind, log, run) for kind in served_kinds(hub)]
            # every kind up front, so that the page shows the sync's progress as kinds done of kinds total
            run.kinds = {table.kind.name: _new_counts() for table in tables}
            run.save(update_fields=["kinds"])
            for table in tables:
                try:
                    versions[table.kind.name] = _list_kind(client, table, run, page_limit, heartbeat)
                except HubError as exc:
                    if isinstance(exc, TransientHubError) or exc.status not in KIND_REFUSALS:
                        raise
                    refused[table.kind.name] = exc
                    _refuse_kind(hub, run, table.kind.name, exc)
        for table in tables:
            if table.kind.name not in refused:
                removed = table.delete_unseen()
                run.kinds[table.kind.name]["removed"] = removed
                run.removed += removed
        _analyze_loaded(tables, run)
        rejections.prune(hub, run.started_at)
    except HubError as exc:
        raise SyncFailed(exc, _fail(hub, run, str(exc))) from exc
    except Exception as exc:
        _fail(hub, run, f"internal error: {type(exc).__name__}: {exc}")
        raise
    if refused:
        failed = _fail_kinds(hub, run, versions, refused)
    else:
        _succeed(hub, run, versions)
    changes.notify(_after_write(hub, log))
    for table in tables:
        changes.report_managed(hub, table.kind.name, table.managed)
    if refused:
        raise SyncFailed(next(iter(refused.values())), failed)
    logger.info(
        "hub %s: %s sync succeeded in %.1fs: %d pages, %d added, %d updated, %d removed",
        hub.name,
        trigger,
        time.monotonic() - started,
        run.pages,
        run.added,
        run.updated,
        run.removed,
    )
    return run


def _analyze_loaded(tables: list[KindRows], run: SyncRun) -> None:
    """Refresh the statistics of the tables this sync added at least `bulk.ANALYZE_AFTER` rows to (two
    kinds share the cluster table)."""
    added: dict[type[models.Model], int] = {}
    for table in tables:
        added[table.model] = added.get(table.model, 0) + run.kinds[table.kind.name]["added"]
    bulk.analyze({model for model, count in added.items() if count >= bulk.ANALYZE_AFTER})


def _refuse_kind(hub: Hub, run: SyncRun, kind_name: str, error: HubError) -> None:
    """Record in the run that the hub refused to list `kind_name`, with its reason; the sync goes on."""
    logger.warning("hub %s: %s not listed: %s", hub.name, kind_name, error)
    run.kinds[kind_name]["error"] = str(error)
    run.save(update_fields=["kinds"])


def _fail(hub: Hub, run: SyncRun, error: str) -> SyncRun:
    now = timezone.now()
    ManagedCluster.objects.filter(hub=hub).update(stale=True)
    Hub.objects.filter(pk=hub.pk).update(last_synced_at=now, last_sync_error=error)
    hub.last_synced_at, hub.last_sync_error = now, error
    run.state, run.error, run.finished_at = SyncRun.State.FAILED, error, now
    run.save(update_fields=["state", "error", "finished_at", "kinds"])
    logger.warning("hub %s: %s sync failed: %s", hub.name, run.trigger, error)
    return run


def _fail_kinds(hub: Hub, run: SyncRun, versions: dict[str, str], refused: dict[str, HubError]) -> SyncRun:
    """A sync that listed every kind but `refused`: the failure names them, the clusters of a refused
    cluster kind are stale, and watches resume the kinds that were listed from this sync's versions."""
    listed = len(run.kinds) - len(refused)
    error = "; ".join(f"{kind} not listed: {exc}" for kind, exc in refused.items())
    error += f" ({listed} other kind{'s' if listed != 1 else ''} synced)"
    ManagedCluster.objects.filter(hub=hub, kind__in=list(refused)).update(stale=True)
    ManagedCluster.objects.filter(hub=hub, stale=True).exclude(kind__in=list(refused)).update(stale=False)
    now = timezone.now()
    hub.last_synced_at, hub.last_sync_error = now, error
    hub.resource_versions = versions
    hub.save(update_fields=["last_synced_at", "last_sync_error", "resource_versions"])
    run.state, run.error, run.finished_at = SyncRun.State.FAILED, error, now
    run.save(update_fields=["state", "error", "finished_at", "removed", "kinds"])
    logger.warning("hub %s: %s sync failed: %s", hub.name, run.trigger, error)
    return run


def _succeed(hub: Hub, run: SyncRun, versions: dict[str, str]) -> None:
    now = timezone.now()
    ManagedCluster.objects.filter(hub=hub, stale=True).update(stale=False)
    hub.last_synced_at = hub.last_good_sync_at = now
    hub.last_sync_error = ""
    hub.resource_versions = versions
    hub.save(update_fields=["last_synced_at", "last_good_sync_at", "last_sync_error", "resource_versions"])
    run.state, run.finished_at = SyncRun.State.SUCCEEDED, now
    run.save(update_fields=["state", "finished_at", "removed", "kinds"])


def _after_write(hub: Hub, log: changes.ChangeLog) -> changes.HubChanges:
    """Keep memberships current and record what changed (`changes.record`, in the caller's transaction);
    answers the changes to `notify` once they are committed. A change no scheduler notices (a heartbeat,
    a condition's time) moves no membership either: only the clusters a change moved are recomputed, or
    every cluster of the hub when a set changed or more clusters than a rebuild costs."""
    if not log:
        return changes.HubChanges(hub.pk)
    hub_changes = changes.build(hub, log)
    if hub_changes.cluster_sets or len(hub_changes.clusters) > memberships.BATCH:
        memberships.rebuild(hub)
    elif moved := [row for change in hub_changes.clusters if (row := change.rows[1]) is not None]:
        # a deleted cluster's memberships went with it (cascade)
        memberships.update_clusters(hub, cast(list[ManagedCluster], moved))
    changes.record(hub_changes)
    return hub_changes


Event = tuple[str, dict[str, Any]]


def apply_events(
    hub: Hub, kind: Kind, events: Sequence[Event], *, also: Callable[[], object] | None = None
) -> bool:
    """Watch events of one kind, (type, object) with type ADDED, MODIFIED or DELETED, written through the
    sync's row path in one transaction; only each object's last event counts. Answers whether a row
    changed. The change listeners hear of it once it is committed, so their work (rescheduling, in
    process without a broker) holds no lock. `also` runs in the same transaction after the rows are
    written: an editor's audit entry commits with the change or not at all."""
    last: dict[str, Event] = {}
    for event_type, obj in events:
        last[object_name(obj)] = (event_type, obj)
    log = changes.ChangeLog()
    table = KindRows(hub, kind, log)
    with transaction.atomic():
        table.upsert([obj for event_type, obj in last.values() if event_type != "DELETED"])
        table.delete([obj for event_type, obj in last.values() if event_type == "DELETED"])
        hub_changes = _after_write(hub, log)
        if also is not None:
            also()
    changes.notify(hub_changes)
    changes.report_managed(hub, kind.name, table.managed)
    return bool(log)


def apply_event(
    hub: Hub, kind: Kind, event_type: str, obj: dict[str, Any], *, also: Callable[[], object] | None = None
) -> bool:
    """One watch event (ADDED, MODIFIED, DELETED) written through the sync's row path; answers changed."""
    return apply_events(hub, kind, [(event_type, obj)], also=also)
