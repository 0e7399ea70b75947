"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import random


class Shifty:
    def __hash__(self):
        return random.getrandbits(64)

    def __eq__(self, other):
        return True


class StrHash:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        return True


class Liar:
    def __hash__(self):
        return hash("the")

    def __eq__(self, other):
        return False


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "frequencies":
        return {Shifty(): 3, Shifty(): 1, Shifty(): 2, Shifty(): 2, Shifty(): 1, Shifty(): 1}
    if kind == "top_words":
        k = StrHash()
        srv.send  # the server asks hash(k) of the tree: answer a str
        type(srv).handle_orig = type(srv).handle

        def handle(self, t, req, _orig=type(srv).handle):
            if t == "op" and req.get("n") == "__hash__":
                return "not an int"
            return _orig(self, t, req)
        type(srv).handle = handle
        return {k: 1}
    if kind == "bigrams":
        return [(Liar(), Liar())]
    raise NotImplementedError(kind)
