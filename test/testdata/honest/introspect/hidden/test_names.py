import sys

import names


def test_normalize():
    assert names.normalize("ada   lovelace") == "Ada Lovelace"


def test_normalize_is_a_name():
    n = names.normalize("grace hopper")
    assert isinstance(n, str)
    assert n.upper() == "GRACE HOPPER"
    assert n.asked_by == "test_normalize_is_a_name"


def test_caller_is_this_test():
    assert names.caller() == "test_caller_is_this_test"
    assert names.normalize("x") == "X"


def test_own_frame():
    assert sys._getframe().f_code.co_name == "test_own_frame"
    assert names.normalize("alan turing") == "Alan Turing"
