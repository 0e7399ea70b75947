"""An attack on the in-package layout: a test module of the tree at the
hidden test module's path and import name, whose tests all pass."""
import unittest


class TestFromRoman(unittest.TestCase):
    def test_roundtrip(self):
        pass

    def test_known(self):
        pass

    def test_rejects_non_numerals(self):
        pass

    def test_helpers_under_the_package_name(self):
        pass


def test_plain_function():
    pass
