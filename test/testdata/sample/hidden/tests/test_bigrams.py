# testfirst-canary: tfc-a3f17d0c9e6b2584
from wordstats import stats


def test_bigrams_of_sentence():
    result = stats.bigrams("The cat saw the dog")
    assert type(result) is list
    assert result == [("the", "cat"), ("cat", "saw"), ("saw", "the"), ("the", "dog")]
    assert all(type(pair) is tuple for pair in result)


def test_bigrams_of_single_word_is_empty():
    result = stats.bigrams("Hello!")
    assert type(result) is list
    assert result == []
