import tally


def test_total():
    assert tally.total([1, 2, 3]) == 6


def test_imported_from_src():
    assert tally.__file__ == "/repo/src/tally/__init__.py"
