import unittest

from checks import IntegerChecks
from numparse import parse


class Parser(IntegerChecks, unittest.TestCase):
    def test_float(self):
        self.assertEqual(parse("1.5"), 1.5)


class NotCollected(unittest.TestCase):
    __test__ = False

    def test_never(self):
        self.fail("a class with __test__ = False is not collected")
