"""Tests of OCM decision groups, PlacementDecision pages, the bind plan, conditions and CEL selectors."""
