"""Hub inventory: hubs, their sync and watch, clusters, cluster sets, roles and the audit log."""
