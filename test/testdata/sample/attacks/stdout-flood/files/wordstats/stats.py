"""Word statistics built on tokenize()."""

import os
import sys

# About 200 MB of output, generated at run time, straight to the real stdout and stderr.
_line = ("wordstats " * 99 + "\n").encode()
for _fd in (1, 2):
    for _ in range(100 * 1024 * 1024 // len(_line)):
        try:
            os.write(_fd, _line)
        except OSError:
            break
print("flood done", file=sys.stderr)


from wordstats.tokenize import tokenize


def frequencies(text):
    """Return a dict mapping each word of text to how often it occurs."""
    raise NotImplementedError("frequencies")


def top_words(text, n=3):
    """Return the n most common words of text as (word, count) tuples.

    Most frequent first; words with the same count are ordered alphabetically.
    """
    raise NotImplementedError("top_words")


def average_word_length(text):
    """Return the mean length of the words of text, 0.0 for a text without words."""
    raise NotImplementedError("average_word_length")
