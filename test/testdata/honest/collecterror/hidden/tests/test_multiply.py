import calc


def test_add_still_works():
    assert calc.add(2, 2) == 4


def test_multiply_negative():
    from calc import multiply
    assert multiply(-2, 5) == -10


def test_multiply_by_one():
    from calc import multiply
    assert multiply(9, 1) == 9
