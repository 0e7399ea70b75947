from wordstats import bigrams, frequencies, top_words


def test_frequencies(sample_text):
    assert frequencies(sample_text)["saw"] == 2


def test_top_word(sample_text):
    assert top_words(sample_text, 1) == [("the", 3)]


def test_first_bigram(sample_text):
    assert bigrams(sample_text)[0] == ("the", "cat")
