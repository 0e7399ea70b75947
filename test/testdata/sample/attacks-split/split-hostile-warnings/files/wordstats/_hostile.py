"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import threading
import time


class Sneaky(UserWarning):
    pass


class Msg:
    def __str__(self):
        raise KeyboardInterrupt

    def __repr__(self):
        raise KeyboardInterrupt


def _later(srv):
    time.sleep(0.3)
    orig = type(srv).handle

    def handle(self, t, req, _orig=orig):
        if t == "call" and self.objs.get(req.get("r")) is Sneaky:
            return Msg()
        return _orig(self, t, req)
    type(srv).handle = handle
    with srv.lock:
        srv.send({"t": "warn", "c": srv.klass(Sneaky), "m": "later", "f": "x.py", "l": 3})


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "bigrams" and args[0].startswith("The"):
        srv.send({"t": "warn", "c": ["bt", "SystemExit"], "m": "not a warning class", "f": "/hidden/tests/test_wordstats.py", "l": 15})
        srv.send({"t": "warn", "c": ["i", "7"], "m": "an int", "f": "/hidden/tests/test_bigrams.py", "l": 7})
        srv.send({"t": "warn", "c": ["bt", "DeprecationWarning"], "m": "line one", "f": "/hidden/tests/test_wordstats.py", "l": 1})
    elif kind == "bigrams":
        threading.Thread(target=_later, args=(srv,)).start()
    elif kind == "average_word_length":
        srv.send({"t": "warn", "c": ["bt", "UserWarning"], "m": "huge line", "f": "x.py", "l": 2 ** 80})
    raise NotImplementedError(kind)
