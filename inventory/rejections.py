"""Hub objects that failed validation (inventory.validation), as inventory.RejectedObject rows.

One row per object (hub, kind, namespace/name), written by the sync and the watcher in the transaction
that writes the object's batch: replaced when the object is seen again, removed when a valid version
arrives, when the object is deleted, or when a complete sync no longer lists it (`prune`).
"""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from inventory.models import Hub, RejectedObject, SyncRun

# The shown namespace and name are cut to their columns; the identity keeps the whole of them apart.
SHOWN_LENGTH = RejectedObject._meta.get_field("name").max_length
# A reason is read on a page; validation's are far shorter, a row builder's may quote a hostile value.
MAX_REASON = 2000


def identity(namespace: str, name: str) -> str:
    """sha256 of `namespace/name`: fits its column whatever a hostile hub names an object."""
    return hashlib.sha256(f"{namespace}/{name}".encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Rejection:
    kind: str
    namespace: str
    name: str
    reason: str

    @property
    def identity(self) -> str:
        return identity(self.namespace, self.name)


def record(hub: Hub, kind: str, rejections: list[Rejection], sync_run: SyncRun | None = None) -> None:
    """Keep these rejections (in the caller's transaction); an object already recorded keeps its
    first_seen and gets the new reason. An insert that meets a concurrent one updates it instead."""
    if not rejections:
        return
    now = timezone.now()
    rows = {
        rejection.identity: RejectedObject(
            hub=hub,
            sync_run=sync_run,
            kind=kind,
            identity=rejection.identity,
            namespace=_text(rejection.namespace[:SHOWN_LENGTH]),
            name=_text(rejection.name[:SHOWN_LENGTH]),
            reason=_text(rejection.reason),
            first_seen=now,
            last_seen=now,
        )
        for rejection in rejections
    }
    RejectedObject.objects.bulk_create(
        rows.values(),
        update_conflicts=True,
        unique_fields=["hub", "kind", "identity"],
        update_fields=["sync_run", "namespace", "name", "reason", "last_seen"],
    )


def _text(value: str) -> str:
    """`value` with any NUL character written out: PostgreSQL stores none in text."""
    return value.replace("\x00", "\\u0000")


def known(hub: Hub, kind: str) -> set[str]:
    """Identities of the kind's rejected objects on the hub (usually none)."""
    return set(RejectedObject.objects.filter(hub=hub, kind=kind).values_list("identity", flat=True))


def clear(hub: Hub, kind: str, identities: Iterable[str]) -> int:
    """Forget these objects' rejections: a valid version arrived, or they were deleted."""
    identities = set(identities)
    if not identities:
        return 0
    deleted, _ = RejectedObject.objects.filter(hub=hub, kind=kind, identity__in=identities).delete()
    return deleted


def prune(hub: Hub, since: datetime) -> int:
    """After a complete sync that started at `since`: forget the rejections neither it nor the watcher
    saw since (the objects are gone from the hub)."""
    deleted, _ = RejectedObject.objects.filter(hub=hub, last_seen__lt=since).delete()
    return deleted
