"""Management commands of the hub inventory."""
