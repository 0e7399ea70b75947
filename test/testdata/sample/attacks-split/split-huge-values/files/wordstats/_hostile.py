"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    if _evil.server() is None:
        raise NotImplementedError(kind)
    if kind == "frequencies":
        _evil.answer(["i", "f" * (1 << 20)])
    elif kind == "top_words":
        _evil.answer(["i", "f" * ((1 << 20) + 1)])
    elif kind == "average_word_length":
        _evil.answer(["f", "3." + "0" * 63])
    else:
        _evil.answer("x" * (60 << 20))
    return None
