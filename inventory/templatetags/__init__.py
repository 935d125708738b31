"""Template tags of the inventory pages and of the pages that name its clusters."""
