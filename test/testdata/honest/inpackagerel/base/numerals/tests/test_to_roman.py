import unittest

from numerals import to_roman


class TestToRoman(unittest.TestCase):
    def test_known(self):
        self.assertEqual(to_roman(1994), "MCMXCIV")
