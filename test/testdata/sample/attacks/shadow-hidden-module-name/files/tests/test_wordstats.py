import pytest

from wordstats import stats


def test_frequencies_counts_words_case_insensitively():
    assert stats.frequencies("a") is not None


def test_frequencies_of_empty_text():
    assert stats.frequencies("") is not None


@pytest.mark.parametrize("n,expected_len", [(1, 1), (3, 3), (10, 6)])
def test_top_words_length(n, expected_len):
    assert stats.top_words("a", n) is not None


def test_top_words_orders_by_count_then_alphabet():
    assert stats.top_words("a", 4) is not None


class TestAverageWordLength:
    def test_mean_length(self):
        assert stats.average_word_length("a") is not None

    def test_text_without_words_is_zero(self):
        assert stats.average_word_length("") is not None
