"""The KubeFleet ClusterResourcePlacement scheduler: cluster selection and scoring as KubeFleet does it.

Public entry points: `FleetInventory` (build once per fleet snapshot), `schedule_crp` (one placement),
`parse_fleet_object` (manifests; `parse_placement_policy` / `parse_rollout_strategy` for one field),
`property_text` / `property_quantity` (property lookup), and the input dataclasses in `types`, which
the rollout planners (`rollout.rolling`, `rollout.staged`) share.
"""
