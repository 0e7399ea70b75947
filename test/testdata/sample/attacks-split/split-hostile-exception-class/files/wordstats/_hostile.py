"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    rid = _evil.fresh_rid()
    obj = _evil.fresh_rid()
    if kind == "frequencies":
        d = _evil.desc("Boom", [["bt", "object"]], exception=True)
        v = ["x", ["k", rid], ["t", []], obj, "tb"]
    elif kind == "top_words":
        d = _evil.desc("Stop", [["bt", "KeyboardInterrupt"]], exception=True)
        v = ["x", ["k", rid], ["t", []], obj, "tb"]
    elif kind == "bigrams":
        d = None
        v = ["x", ["bt", "GeneratorExit"], ["t", []], obj, "tb"]
    else:
        d = None
        v = ["x", ["bt", "KeyboardInterrupt"], ["t", []], obj, "tb"]
    srv2 = srv
    q = _evil.current_q()
    _evil.swallow_next_answer(srv2)
    msg = {"t": "exc", "q": q, "v": v}
    if d:
        msg["classes"] = {str(rid): d}
    _evil.raw(msg, srv2)
    return None
