"""OCM Placement scheduling, reproducing open-cluster-management-io/ocm `pkg/placement` to the letter.

Entry points:
- `manifests.parse_ocm_object`: hub objects (dicts) to the frozen inputs of `types`;
- `inventory.OcmInventory`: clusters, sets, bindings, add-on scores and decisions, indexed once;
- `schedule.schedule_placement`: one reconcile of one Placement, with explanations (`report`);
- `clustersets`: set membership, shared with the inventory pages;
- `triggers`: which placements a hub change makes upstream reschedule.
"""
