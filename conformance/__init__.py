"""Differential testing of our scheduler against the upstream OCM and KubeFleet schedulers.

The Go oracle in this folder runs the upstream code; this package generates cases, runs both sides,
compares their verdicts and keeps every disagreement as a regression vector. See README.md here.
"""
