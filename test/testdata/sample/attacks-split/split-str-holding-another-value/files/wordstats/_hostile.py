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
    if kind == "bigrams":
        d = _evil.desc("Word", [["bt", "int"]], value="str")
        v = "12"
    elif kind == "frequencies":
        d = _evil.desc("Word", [["bt", "str"]], value="str")
        v = ["i", "5"]
    elif kind == "top_words":
        d = _evil.desc("Mean", [["bt", "str"]], value="float")
        v = ["f", "3.0"]
    else:
        d = _evil.desc("Pairs", [["bt", "dict"]], value="list")
        v = ["l", []]
    _evil.answer(["sub", obj, ["k", rid], v], classes={str(rid): d})
    return None
