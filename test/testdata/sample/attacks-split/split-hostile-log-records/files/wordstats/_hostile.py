"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "frequencies":
        srv.send({"t": "log", "n": "wordstats", "lv": 2 ** 80, "m": "%s %d %(x)s", "f": "/hidden/tests/test_wordstats.py", "l": 15, "fn": "f", "x": "T" * 8000})
        srv.send({"t": "log", "n": "\x00" * 1000, "lv": -5, "m": "nul", "f": "x", "l": "12", "fn": None, "x": None})
        srv.send({"t": "log", "n": "_pytest.logging", "lv": 50, "m": "critical", "f": "x", "l": 1, "fn": "f", "x": ["not", "text"]})
        srv.send({"t": "log", "n": "root", "lv": 40, "m": "root", "f": "x", "l": 1, "fn": "f", "x": None})
    elif kind == "top_words":
        srv.send({"t": "log", "n": "wordstats", "lv": 40.5, "m": "float level", "f": "x", "l": 1, "fn": "f", "x": None})
    raise NotImplementedError(kind)
