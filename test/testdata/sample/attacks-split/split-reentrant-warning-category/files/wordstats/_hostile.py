"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import threading
import time


class Reentrant(UserWarning):
    def __init__(self, *args):
        srv = _evil.server()
        if srv is not None:
            _evil.raw({"t": "warn", "c": srv.klass(Reentrant), "m": "again", "f": "x.py", "l": 1}, srv)
            try:
                srv.serve(until_answer=True)
            except RecursionError:
                pass
        super().__init__(*args)


def _later(srv):
    time.sleep(0.3)
    with srv.lock:
        srv.send({"t": "warn", "c": srv.klass(Reentrant), "m": "first", "f": "x.py", "l": 1})


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "bigrams":
        threading.Thread(target=_later, args=(srv,)).start()
    raise NotImplementedError(kind)
