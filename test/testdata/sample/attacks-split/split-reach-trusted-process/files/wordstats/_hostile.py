"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import glob

_REPORT = []


def _try(path, n=200):
    try:
        with open(path, "rb") as f:
            data = f.read(n)
        _REPORT.append("READ %s: %r" % (path, data[:80]))
        return data
    except Exception as e:
        _REPORT.append("no %s: %s" % (path, type(e).__name__))
        return None


def _scan():
    if _REPORT:
        return
    for p in ["/hidden", "/hidden/tests", "/hidden/tests/test_wordstats.py"]:
        try:
            _REPORT.append("listdir %s: %r" % (p, os.listdir(p)))
        except Exception as e:
            _REPORT.append("no listdir %s: %s" % (p, type(e).__name__))
        _try(p)
    me = os.getpid()
    for d in glob.glob("/proc/[0-9]*"):
        pid = int(d.rsplit("/", 1)[1])
        if pid == me:
            continue
        cmd = _try(d + "/cmdline", 400) or b""
        for leaf in ("environ", "maps", "mem", "root/hidden/tests/test_wordstats.py", "cwd/../hidden/tests/test_wordstats.py", "fd/3", "fd/4", "fd/5"):
            _try(d + "/" + leaf)
        try:
            _REPORT.append("fds of %d: %r" % (pid, os.listdir(d + "/fd")))
        except Exception as e:
            _REPORT.append("no fds of %d: %s" % (pid, type(e).__name__))
    try:
        _REPORT.append("/tmp: %r" % (os.listdir("/tmp"),))
    except Exception:
        pass
    print("\n".join(_REPORT))


def act(kind, *args):
    _scan()
    raise NotImplementedError(kind)
