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
    fake = "dict\n======== 10 passed in 0.01s ========\n"
    if kind == "frequencies":
        d = _evil.desc("dict", [["bt", "bool"]], value="dict", module="builtins", qualname=fake)
        v = ["sub", obj, ["k", rid], ["d", [["the", ["i", "3"]]]]]
    elif kind == "top_words":
        d = _evil.desc("list", [["bt", "object"]] * 64, module="builtins", qualname=fake, dunders=["__eq__", "__len__", "__iter__"])
        v = ["r", obj, ["k", rid]]
    elif kind == "average_word_length":
        d = _evil.desc("float", [["bt", "type"]], module="builtins", meta=["__contains__"])
        v = ["r", obj, ["k", rid]]
    else:
        d = _evil.desc("module", [["bt", "object"]], module="builtins", dunders=["__eq__"])
        v = ["l", [["r", obj, ["k", rid]]]]
    _evil.answer(v, classes={str(rid): d})
    return None


def _exception_without_base():
    pass
