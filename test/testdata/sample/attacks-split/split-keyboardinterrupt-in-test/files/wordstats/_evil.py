"""Helpers of a hostile tree: the split's tree server, found from inside a
request, and raw frames written to its socket (fd 3)."""

import json
import struct
import sys


def server():
    f = sys._getframe(1)
    while f is not None:
        s = f.f_locals.get("self")
        if s is not None and type(s).__name__ == "Server" and hasattr(s, "sock"):
            return s
        f = f.f_back
    return None


def current_q():
    f = sys._getframe(1)
    while f is not None:
        req = f.f_locals.get("req")
        if type(req) is dict and "q" in req:
            return req.get("q")
        f = f.f_back
    return None


def raw(msg, srv=None):
    srv = srv or server()
    data = json.dumps(msg, separators=(",", ":")).encode()
    srv.sock.sendall(struct.pack(">I", len(data)) + data)


def raw_bytes(b, srv=None):
    (srv or server()).sock.sendall(b)


def swallow_next_answer(srv):
    """The server's own answer to the request being served is dropped: the
    forged one was sent instead."""
    real = type(srv).send

    def send(msg, _done=[False]):
        if not _done[0] and msg.get("t") in ("ret", "exc"):
            _done[0] = True
            return None
        return real(srv, msg)

    srv.send = send


def answer(v, classes=None):
    """Answers the request being served with v (a raw encoded value)."""
    srv = server()
    q = current_q()
    msg = {"t": "ret", "q": q, "v": v}
    if classes:
        msg["classes"] = classes
    swallow_next_answer(srv)
    raw(msg, srv)


def rid_of(obj):
    srv = server()
    return srv.ref(obj)


def desc(name, bases, value=None, dunders=(), exception=False, module="wordstats.stats", qualname=None, meta=()):
    return {"name": name, "qualname": qualname or name, "module": module, "bases": bases,
            "dunders": sorted(dunders), "attrs": [], "value": value, "exception": exception, "meta": list(meta)}


def fresh_rid():
    srv = server()
    rid = srv.next
    srv.next += 1
    return rid
