from calc import multiply


def test_multiply_small():
    assert multiply(3, 4) == 12


def test_multiply_zero():
    assert multiply(0, 7) == 0
