from wordcount import count


def test_nearest_conftest_wins(poem):
    assert count(poem) == 2
