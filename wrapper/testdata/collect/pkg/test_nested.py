import pytest

from .shared import Shared


class TestWrapped(Shared):
    @pytest.mark.parametrize("x", [0, 1])
    def test_param(self, x):
        pass


@pytest.mark.parametrize("s", ["ünï", "a b", b"\x00"])
class TestClassMark:
    def test_m(self, s):
        pass
