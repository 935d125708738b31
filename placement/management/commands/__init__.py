"""Placement commands: apply, describe, load_demo, rollout, runs and the offline schedule."""
