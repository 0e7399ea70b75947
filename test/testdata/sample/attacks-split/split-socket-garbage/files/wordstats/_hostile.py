"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import struct


def act(kind, *args):
    srv = _evil.server()
    if srv is None:
        raise NotImplementedError(kind)
    if kind == "frequencies":
        _evil.raw_bytes(b"\xff\xff\xff\xff", srv)
    elif kind == "top_words":
        _evil.raw_bytes(struct.pack(">I", 5) + b"{nope", srv)
    elif kind == "average_word_length":
        _evil.raw_bytes(struct.pack(">I", 2) + b"[]", srv)
    else:
        body = b"[" * 100000 + b"]" * 100000
        _evil.raw_bytes(struct.pack(">I", len(body)) + body, srv)
    while True:
        os.pause()
