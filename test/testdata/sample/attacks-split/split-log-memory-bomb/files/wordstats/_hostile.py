"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "frequencies":
        big = "z" * 100000
        for i in range(20000):
            _evil.raw({"t": "log", "n": "wordstats", "lv": 40, "m": big, "f": "x.py", "l": i, "fn": "f", "x": "t" * 8000}, srv)
    raise NotImplementedError(kind)
