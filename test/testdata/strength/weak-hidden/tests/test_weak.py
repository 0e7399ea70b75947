from wordstats import stats

TEXT = "The cat saw the dog. The dog saw a bird!"


def test_frequencies():
    assert stats.frequencies(TEXT) == {"the": 3, "cat": 1, "saw": 2, "dog": 2, "a": 1, "bird": 1}


def test_top_words_is_a_list_of_n():
    assert len(stats.top_words(TEXT, 2)) == 2
