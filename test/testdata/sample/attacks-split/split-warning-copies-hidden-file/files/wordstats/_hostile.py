"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


_done = []


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if not _done:
        _done.append(1)
        for path in ("/hidden/tests/test_wordstats.py", "/hidden/tests/test_bigrams.py"):
            for line in range(2, 61):
                srv.send({"t": "warn", "c": ["bt", "UserWarning"], "m": "L%02d" % line, "f": path, "l": line})
    raise NotImplementedError(kind)
