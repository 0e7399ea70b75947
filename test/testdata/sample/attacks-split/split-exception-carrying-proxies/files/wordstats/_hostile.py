"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


class Loud:
    def __repr__(self):
        raise KeyboardInterrupt

    __str__ = __repr__


class TreeError(Exception):
    pass


def act(kind, *args):
    if _evil.server() is None:
        raise NotImplementedError(kind)
    raise TreeError(Loud(), Loud())
