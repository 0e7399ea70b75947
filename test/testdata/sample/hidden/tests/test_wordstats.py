# testfirst-canary: tfc-5e0c9b27d41a86f3
import pytest

from wordstats import stats

TEXT = "The cat saw the dog. The dog saw a bird!"


def test_frequencies_counts_words_case_insensitively():
    result = stats.frequencies(TEXT)
    assert type(result) is dict
    assert result == {"the": 3, "cat": 1, "saw": 2, "dog": 2, "a": 1, "bird": 1}


def test_frequencies_of_empty_text():
    result = stats.frequencies("  ,.! ")
    assert type(result) is dict
    assert result == {}


@pytest.mark.parametrize("n,expected_len", [(1, 1), (3, 3), (10, 6)])
def test_top_words_length(n, expected_len):
    result = stats.top_words(TEXT, n)
    assert type(result) is list
    assert len(result) == expected_len
    assert all(type(pair) is tuple and len(pair) == 2 for pair in result)


def test_top_words_orders_by_count_then_alphabet():
    result = stats.top_words(TEXT, 4)
    assert type(result) is list
    assert [tuple(p) for p in result] == [("the", 3), ("dog", 2), ("saw", 2), ("a", 1)]
    assert [type(p) for p in result] == [tuple] * 4


class TestAverageWordLength:
    def test_mean_length(self):
        result = stats.average_word_length("ab abcd abc")
        assert type(result) is float
        assert result == 3.0

    def test_text_without_words_is_zero(self):
        result = stats.average_word_length("... !")
        assert type(result) is float
        assert result == 0.0
