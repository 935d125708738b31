"""Template tags every app's pages use."""
