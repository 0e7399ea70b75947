"""What this hostile tree does to the split's trusted side."""

import os
import sys

from wordstats import _evil


import time


def act(kind, *args):
    if _evil.server() is None:
        raise NotImplementedError(kind)
    while True:
        time.sleep(3600)
