"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


_ANSWERS = {
    "frequencies": ["d", [["the", ["i", "3"]]]],
    "top_words": ["l", []],
    "average_word_length": ["f", "3.0"],
    "bigrams": ["l", []],
}


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    q = _evil.current_q()
    pid = os.fork()
    if pid == 0:
        try:
            _evil.raw({"t": "ret", "q": q, "v": _ANSWERS[kind]}, srv)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return None
