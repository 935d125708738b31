"""Management commands of the site."""
