"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import struct


def nested(depth):
    return '["l",[' * depth + "null" + "]]" * depth


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    q = _evil.current_q()
    _evil.swallow_next_answer(srv)
    if kind == "bigrams":
        body = nested(190)
    elif kind == "frequencies":
        body = nested(250)
    elif kind == "top_words":
        body = '["l",[' + ",".join(["null"] * 2000001) + "]]"
    else:
        body = "[" * 100000 + "]" * 100000
    data = ('{"t":"ret","q":%d,"v":%s}' % (q, body)).encode()
    srv.sock.sendall(struct.pack(">I", len(data)) + data)
    return None
