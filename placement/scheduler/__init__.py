"""The shared placement scheduler: plain Python, plain data in, decisions and explanations out.

No Django, no I/O, no clock reads (time is an argument). Celery tasks, views, the what-if API and the
offline `schedule` command all call this package.

Subpackages: `ocm` (OCM Placement), `fleet` (KubeFleet ClusterResourcePlacement), `rollout` (pure
rollout planners). Shared primitives: `labels`, `quantity`, `intstr`, `timeutil`, `errors`.
"""
