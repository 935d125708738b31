"""The placements REST API (DRF): CRUD through the placement service, what-if, decisions and history."""
