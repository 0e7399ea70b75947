"""Helpers shared by the package's test modules, new with from_roman."""
import numerals

NUMBERS = (1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999)


def for_each_number(func):
    """Runs the test method once per number of NUMBERS."""
    def wrapper(self):
        for n in NUMBERS:
            func(self, n)

    return wrapper


def assert_roundtrip(case, n):
    case.assertEqual(numerals.from_roman(numerals.to_roman(n)), n)
