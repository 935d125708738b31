"""Signals the placement service sends for the layers above it (the rollouts) to act on.

- `crp_bindings_changed`, with sender `Placement` and `placement`: a reschedule changed the bindings of a
  dashboard-owned ClusterResourcePlacement, after they are stored; its rollout rolls onto them.

Placement knows nothing of its receivers: the rollouts connect theirs in their `AppConfig.ready`.
"""

from django.dispatch import Signal

crp_bindings_changed = Signal()
