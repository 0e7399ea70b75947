import unittest


class Checks:
    def test_from_mixin(self):
        pass

    def helper(self):
        pass


class BaseCase(unittest.TestCase):
    def test_in_base(self):
        pass
