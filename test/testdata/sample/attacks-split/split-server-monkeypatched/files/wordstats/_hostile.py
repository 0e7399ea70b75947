"""What this hostile tree does to the split's trusted side."""

def act(kind, *args):
    raise NotImplementedError(kind)
