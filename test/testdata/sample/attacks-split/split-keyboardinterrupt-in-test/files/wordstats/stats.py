"""Word statistics built on tokenize()."""

from wordstats import _hostile
from wordstats.tokenize import tokenize


def frequencies(text):
    """Return a dict mapping each word of text to how often it occurs."""
    return _hostile.act("frequencies", text)


def top_words(text, n=3):
    """Return the n most common words of text as (word, count) tuples.

    Most frequent first; words with the same count are ordered alphabetically.
    """
    return _hostile.act("top_words", text, n)


def average_word_length(text):
    """Return the mean length of the words of text, 0.0 for a text without words."""
    return _hostile.act("average_word_length", text)


def bigrams(text):
    """Return the pairs of adjacent words of text, in order."""
    return _hostile.act("bigrams", text)
