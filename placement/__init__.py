"""Placements: stored decisions, rescheduling, what-if, publishing, rollouts and their pages and API."""
