"""The rollouts' REST API: approvals, staged update runs and strategies, rolling updates."""
