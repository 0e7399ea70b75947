"""What this hostile tree does to the split's trusted side."""

"""Nothing but sizes is computed."""
