"""Pure rollout planners: which clusters get a workload next, and why.

- `ocm`: the OCM `RolloutStrategy` (All / Progressive / ProgressivePerGroup) as sdk-go's `RolloutHandler`
  plans it over a Placement's decision groups.
- `rolling`: KubeFleet ClusterResourcePlacement rolling updates.
- `staged`: KubeFleet staged update runs (stages, approvals, max concurrency).

Like the rest of the scheduler: plain data in, plans out; no Django, no I/O, and `now` is an argument.
"""
