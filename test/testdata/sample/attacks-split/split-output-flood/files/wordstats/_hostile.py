"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    chunk = "y" * 4095 + "\n"
    for _ in range(16384):
        _evil.raw({"t": "out", "s": "stdout", "d": chunk}, srv)
    big = "z" * 100000
    for i in range(2000):
        _evil.raw({"t": "log", "n": "wordstats", "lv": 40, "m": big, "f": "x.py", "l": i, "fn": "f", "x": None}, srv)
    raise NotImplementedError(kind)
