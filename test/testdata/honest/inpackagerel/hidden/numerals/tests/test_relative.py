import unittest

# As colorama's tests do: the library and the tests' helpers imported
# relatively, from a test package inside the library's package.
from .. import from_roman
from . import _helpers
from ._helpers import for_each_number


class TestRelative(unittest.TestCase):
    @for_each_number
    def test_roundtrip(self, n):
        _helpers.assert_roundtrip(self, n)

    def test_known(self):
        self.assertEqual(from_roman("MCMXCIV"), 1994)

    def test_module_name_is_the_projects(self):
        self.assertEqual(__name__, "numerals.tests.test_relative")
