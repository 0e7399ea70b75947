"""An attack on the in-package layout: the tree's own numerals.tests
helpers, whose checks check nothing."""

NUMBERS = ()


def for_each_number(func):
    def wrapper(self):
        pass

    return wrapper


def assert_roundtrip(case, n):
    pass
