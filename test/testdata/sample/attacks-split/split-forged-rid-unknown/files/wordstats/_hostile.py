"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


_FORGED = {
    "frequencies": ["r", 77777, ["k", 99999]],
    "top_words": ["k", 88888],
    "average_word_length": ["sub", 66666, ["k", 55555], ["f", "3.0"]],
    "bigrams": ["r", "00012", ["k", "4e4"]],
}


def act(kind, *args):
    if _evil.server() is None:
        raise NotImplementedError(kind)
    _evil.answer(_FORGED[kind])
    return None
