from wordcount import count


def test_poem_words(poem):
    assert count(poem) == 8


def test_empty():
    assert count("") == 0 and count("one") == 1


def test_counter_fixture(counter):
    assert counter("a b c") == 3
