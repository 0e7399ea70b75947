import unittest


def area(side):
    return side * 2


class ShapeTestCase(unittest.TestCase):
    """The project's own base class for its tests."""

    def assertArea(self, side, want):
        self.assertEqual(area(side), want)
