"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    if _evil.server() is None:
        raise NotImplementedError(kind)
    _evil.raw({"t": "cb", "h": 4242, "a": ["l", []], "k": ["d", []]})
    raise NotImplementedError(kind)
