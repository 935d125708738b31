"""Signals the inventory sends when a sync or a watch event changed a hub's rows.

Both are sent by `inventory.changes` (`record`, `notify`) with sender `Hub` and `hub_changes`, the
`inventory.changes.HubChanges` of the write, and only when something a reader can notice changed:

- `hub_changes_recorded`, inside the transaction that writes the rows, for bookkeeping that must be
  committed with the change (a change and the work it owes are stored together, or neither is); a
  receiver that raises fails the write, and the receivers connected after it are not called.
- `hub_changed`, once the rows are committed; a receiver that raises is logged and stops neither the
  other receivers nor the sync (what it owed was stored with the change).

A third, `managed_objects_reported` (sender `Hub`, with `hub`, `kind`, the kind's name, and `objects`), is
sent after a sync or a batch of watch events listed objects that carry this dashboard's managed-by label:
they are never mirrored into rows (their rows are the dashboard's own), but what the hub reports on them
(a binding's Applied / Available) is news to the app that wrote them. A receiver that raises is logged.

The inventory knows nothing of its readers: the apps above it connect their receivers in their
`AppConfig.ready`.
"""

from django.dispatch import Signal

hub_changes_recorded = Signal()
hub_changed = Signal()
managed_objects_reported = Signal()
