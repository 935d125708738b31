"""Rollouts: staged update runs and strategies, approvals, rolling updates and rollout previews.

A layer above the rest of placement: its models stay in `placement.models`, and placement reaches it only
through a signal (`placement.signals`) and a hook of the placement page (`placement.views.sections`).
"""
