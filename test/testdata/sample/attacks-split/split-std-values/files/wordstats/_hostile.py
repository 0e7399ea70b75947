"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "bigrams":
        _evil.answer(["std", "fraction", ["1", "0"]])
    elif kind == "frequencies":
        _evil.answer(["l", [["t", [["std", "decimal", "sNaN"], ["std", "decimal", "sNaN"]]]]])
    elif kind == "top_words":
        _evil.answer(["std", "range", ["0", "1", "0"]])
    else:
        _evil.answer(["l", [["std", "datetime", "10000-01-01T00:00:00"], ["std", "timedelta", [10 ** 12, 0, 0]]]])
    return None
