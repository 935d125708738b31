"""Management commands of the demo hub."""
