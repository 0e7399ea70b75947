from wordstats import stats


def test_bigrams_of_sentence():
    assert stats.bigrams("a b") is not None


def test_bigrams_of_single_word_is_empty():
    assert stats.bigrams("a") is not None
