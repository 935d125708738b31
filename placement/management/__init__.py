"""Management commands of placements."""
