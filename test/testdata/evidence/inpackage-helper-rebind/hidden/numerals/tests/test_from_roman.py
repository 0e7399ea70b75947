import unittest

import numerals
import numerals.tests
from numerals.tests import _helpers
from numerals.tests._helpers import assert_roundtrip, for_each_number


class TestFromRoman(unittest.TestCase):
    @for_each_number
    def test_roundtrip(self, n):
        assert_roundtrip(self, n)

    def test_known(self):
        self.assertEqual(numerals.from_roman("MCMXCIV"), 1994)

    def test_rejects_non_numerals(self):
        for s in ("", "IIII", "VX", "ABC"):
            with self.assertRaises(ValueError):
                numerals.from_roman(s)

    def test_helpers_under_the_package_name(self):
        self.assertEqual(_helpers.__name__, "numerals.tests._helpers")
        self.assertTrue(callable(numerals.tests.all_tests_suite))


def test_plain_function():
    assert numerals.from_roman("XLII") == 42
