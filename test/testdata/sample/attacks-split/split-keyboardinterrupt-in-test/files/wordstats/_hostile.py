"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


_calls = [0]


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    _calls[0] += 1
    if _calls[0] == 2:
        q = _evil.current_q()
        _evil.swallow_next_answer(srv)
        _evil.raw({"t": "exc", "q": q, "v": ["x", ["bt", "KeyboardInterrupt"], ["t", []], _evil.fresh_rid(), ""]}, srv)
        return None
    raise NotImplementedError(kind)
