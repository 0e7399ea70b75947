import pytest

from palette import check


@pytest.mark.parametrize("param", ["fg", "bg"])
@pytest.mark.parametrize("value", ["", "banana", "é", b"red", True, False, -1, 0.0, None, (), (-1, 0, 0)])
def test_invalid(param, value):
    with pytest.raises(ValueError, match="Unknown color"):
        check(value)


@pytest.mark.parametrize("value", ["red", "green"], ids=["", "g"])
@pytest.mark.parametrize("case", ["", pytest.param("x", id="")])
def test_valid(value, case):
    assert check(value) == value


@pytest.mark.parametrize("value", ["", -1])
class TestClassLevel:
    @pytest.mark.parametrize("other", ["", "red"])
    def test_pair(self, value, other):
        with pytest.raises(ValueError):
            check(value)
