"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    mod = sys.modules["wordstats.stats"]
    mod_rid = srv.ref(mod)
    if kind == "bigrams":
        _evil.answer(["sub", mod_rid, ["bt", "dict"], ["d", [["the", ["i", "3"]]]]])
    elif kind == "frequencies":
        cls_ref = srv.klass(type(_evil.server))
        _evil.answer(["d", [["k", cls_ref]]])
    elif kind == "top_words":
        _evil.answer(["x", ["bt", "ValueError"], ["t", []], mod_rid, ""])
    else:
        raise NotImplementedError(kind)
    return None
