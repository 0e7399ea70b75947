"""The package's own tests, run by `python -m unittest numerals.tests`."""
import os
import unittest


def all_tests_suite():
    names = ["numerals.tests." + f[:-3] for f in sorted(os.listdir(os.path.dirname(__file__)))
             if f.startswith("test_") and f.endswith(".py")]
    return unittest.TestLoader().loadTestsFromNames(names)
