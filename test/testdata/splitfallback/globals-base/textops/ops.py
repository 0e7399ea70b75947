"""Word operations that take the caller's functions."""

_seen = {}


def map_words(fn, text):
    """fn applied to each word of text; the modules whose functions were
    mapped are counted (a helper that reads the caller's function's
    globals, as six's do)."""
    module = fn.__globals__.get("__name__")
    _seen[module] = _seen.get(module, 0) + 1
    return [fn(w) for w in text.split()]


def count_words(text, key):
    """How often each word of text occurs, words compared by key."""
    counts = {}
    for w in text.split():
        counts[w] = counts.get(w, 0) + 1  # the bug: key is not applied
    return counts


def frames(tb):
    """How many frames a traceback holds."""
    n = 0
    while tb is not None:
        n, tb = n + 1, tb.tb_next
    return n
