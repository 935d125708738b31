"""The inventory REST API (DRF): read-only viewsets over the same FilterSets as the pages."""
