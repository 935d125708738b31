"""The demo hub: a small Kubernetes API server for the OCM and Fleet kinds (see README.md here)."""

from demohub.hub import DemoHub
from demohub.store import ApiError, Clock, Store

__all__ = ["ApiError", "Clock", "DemoHub", "Store"]
