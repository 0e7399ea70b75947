"""Splitting text into words."""

import re

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")


def tokenize(text):
    """Return the words of text, lower-cased, in order.

    A word is a run of letters and digits; an apostrophe inside a word is kept
    ("don't"), punctuation and white space separate words.
    """
    return _WORD.findall(text.lower())


def word_count(text):
    """Return the number of words in text."""
    return len(tokenize(text))
