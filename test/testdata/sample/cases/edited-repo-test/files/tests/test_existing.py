from wordstats import tokenize, word_count


def test_tokenize_lowercases_and_strips_punctuation():
    assert tokenize("Hello, World!") == ["hello", "world"]


def test_tokenize_keeps_inner_apostrophes():
    assert tokenize("Don't stop") == ["don't", "stop"]


def test_word_count():
    assert word_count("one two  three\nfour five") == 5
    assert word_count("") == 0


def test_word_count_ignores_punctuation_only_text():
    assert word_count("... !!") == 0
