from wordcount import count


def test_poem_words(poem):
    assert count(poem) == 8


def test_empty():
    assert count("") == 0 and count("one") == 1
