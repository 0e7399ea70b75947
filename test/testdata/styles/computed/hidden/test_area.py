import pytest

from shapes import ShapeTestCase, area
from squares import SIDES


@pytest.mark.parametrize("side,want", SIDES)
def test_area(side, want):
    assert area(side) == want


class Areas(ShapeTestCase):
    def test_unit_square(self):
        self.assertArea(1, 1)

    def test_larger_square(self):
        self.assertArea(5, 25)
