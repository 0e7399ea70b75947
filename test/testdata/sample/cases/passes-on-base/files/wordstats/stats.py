"""Word statistics built on tokenize()."""

from collections import Counter

from wordstats.tokenize import tokenize


def frequencies(text):
    """Return a dict mapping each word of text to how often it occurs."""
    return dict(Counter(tokenize(text)))


def top_words(text, n=3):
    """Return the n most common words of text as (word, count) tuples.

    Most frequent first; words with the same count are ordered alphabetically.
    """
    counts = frequencies(text)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]


def average_word_length(text):
    """Return the mean length of the words of text, 0.0 for a text without words."""
    words = tokenize(text)
    if not words:
        return 0.0
    return sum(len(word) for word in words) / len(words)


def bigrams(text):
    """Return the pairs of adjacent words of text, in order."""
    words = tokenize(text)
    return list(zip(words, words[1:]))
