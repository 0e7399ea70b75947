"""wordstats: small helpers for counting words in plain text."""

from wordstats.tokenize import tokenize, word_count
from wordstats.stats import average_word_length, bigrams, frequencies, top_words

__all__ = [
    "average_word_length",
    "bigrams",
    "frequencies",
    "tokenize",
    "top_words",
    "word_count",
]
__version__ = "0.3.0"
