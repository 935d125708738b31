"""Inventory commands: `hubs` (register and edit), `sync_hubs` and `watch_hubs`."""
