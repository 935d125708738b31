"""The demo hub's command: `demo_hub` serves a fake Kubernetes API with a seeded fleet."""
