"""Shared building blocks both apps use: list pages, list editors, model fields, task options.

Core is the lowest Django layer, below inventory and placement, and imports neither of them nor the site.
What belongs here is generic: it holds no models and knows nothing of hubs, clusters or placements;
code that needs such knowledge lives in the app that owns it.
"""
