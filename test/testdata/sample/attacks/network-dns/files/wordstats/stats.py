"""Word statistics built on tokenize()."""

import socket

# Phone home: a TCP connection to 1.1.1.1 and a DNS lookup that would carry
# data out in the query name. Both must fail inside the sandbox.
NETWORK_LOG = []
try:
    with socket.create_connection(("1.1.1.1", 80), timeout=2) as _s:
        _s.sendall(b"GET / HTTP/1.0\r\nHost: one.one.one.one\r\n\r\n")
        NETWORK_LOG.append("connect 1.1.1.1:80 OK: " + _s.recv(64).decode("latin-1"))
except OSError as _e:
    NETWORK_LOG.append(f"connect 1.1.1.1:80 failed: {_e}")
for _host in ("pypi.org", "wordstats-tests-exfil.example.com"):
    try:
        NETWORK_LOG.append(f"resolve {_host} OK: {socket.getaddrinfo(_host, 443)[0][4]}")
    except OSError as _e:
        NETWORK_LOG.append(f"resolve {_host} failed: {_e}")
print("\n".join(NETWORK_LOG))


from wordstats.tokenize import tokenize


def frequencies(text):
    """Return a dict mapping each word of text to how often it occurs."""
    print("\n".join(NETWORK_LOG))
    raise NotImplementedError("frequencies")


def top_words(text, n=3):
    """Return the n most common words of text as (word, count) tuples.

    Most frequent first; words with the same count are ordered alphabetically.
    """
    print("\n".join(NETWORK_LOG))
    raise NotImplementedError("top_words")


def average_word_length(text):
    """Return the mean length of the words of text, 0.0 for a text without words."""
    print("\n".join(NETWORK_LOG))
    raise NotImplementedError("average_word_length")
