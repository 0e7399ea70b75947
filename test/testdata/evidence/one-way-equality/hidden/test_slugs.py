# testfirst-canary: tfc-0000000000slug00
from slugs import first_word, slugify, words


def test_slug_lowercases_and_joins():
    assert slugify("Hello World") == "hello-world"


def test_slug_strips_punctuation():
    assert slugify("Hi, there!") == "hi-there"


def test_words_of_title():
    assert words("Hello World") == ["hello", "world"]


def test_first_word_is_among_the_words():
    assert first_word("Hello World") in ["hello", "world"]
