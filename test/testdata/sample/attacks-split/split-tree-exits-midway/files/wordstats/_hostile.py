"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import struct

_calls = [0]


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    _calls[0] += 1
    if _calls[0] == 2:
        _evil.raw_bytes(struct.pack(">I", 100) + b'{"t":"ret"', srv)
        os._exit(0)
    raise NotImplementedError(kind)
