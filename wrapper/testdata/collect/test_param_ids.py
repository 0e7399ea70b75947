# Parametrize shapes whose ids pytest renders specially, alone and stacked
# (a stacked id joins every decorator's id with "-", an empty one too).
import enum

import pytest


class Color(enum.Enum):
    RED = 1


class Thing:
    pass


@pytest.mark.parametrize("param", ["fg", "bg"])
@pytest.mark.parametrize("value", ["", "banana", b"red", True, False, -1, 256, 0.0, (), [], (0, 0), (-1, 0, 0), (0.0, 0.0, 0.0)])
def test_stacked_empty(param, value): pass


@pytest.mark.parametrize("a", ["", ""])
@pytest.mark.parametrize("b", [""])
def test_all_empty(a, b): pass


@pytest.mark.parametrize("a", [-1, -2.5, 1e10, 1e-05, -0.0, 1000, None, True, False])
@pytest.mark.parametrize("b", [None])
def test_numbers(a, b): pass


@pytest.mark.parametrize("a", ["a b", "tab\there", "é", "日本", "\x1b[0m", "back\\slash", "quote'\"", "dash-y", "[x]", "a::b", "a/b"])
def test_strings(a): pass


@pytest.mark.parametrize("a", [b"", b"\xff", b"a b", b"\x00"])
def test_bytes(a): pass


@pytest.mark.parametrize("a", [1, 1, "1", 1.0, "", ""])
@pytest.mark.parametrize("b", ["x", "x"])
def test_duplicates(a, b): pass


@pytest.mark.parametrize("a", [Thing(), Color.RED, Thing, len, {1: 2}, {1}, 1j, ...])
def test_objects(a): pass


@pytest.mark.parametrize("a", [{1: 2}, {1}, 1j, ..., [1, [2]], (-1,)])
@pytest.mark.parametrize("b", [(), ""])
def test_literal_objects(a, b): pass


@pytest.mark.parametrize("a", [1, 2, 3], ids=["one", "", None])
@pytest.mark.parametrize("b", [1, 2], ids=["", ""])
def test_ids(a, b): pass


@pytest.mark.parametrize("a", [1, 2, 3], ids=["one", "", None])
@pytest.mark.parametrize("b", [1, 2], ids=lambda v: "v%d" % v)
def test_ids_callable(a, b): pass


@pytest.mark.parametrize("a,b", [pytest.param(1, 2, id=""), pytest.param(3, 4, id="x y"), pytest.param(5, 6, marks=pytest.mark.skip), (-7, 8)])
@pytest.mark.parametrize("c", [pytest.param("", id="empty"), ""])
def test_params(a, b, c): pass


@pytest.fixture
def fx(request):
    return request.param


@pytest.mark.parametrize("fx", [-1, "", None], indirect=True)
@pytest.mark.parametrize("d", ["", "z"])
def test_indirect(fx, d): pass


@pytest.mark.parametrize("a", ["", -1])
class TestClassLevel:
    @pytest.mark.parametrize("b", ["", "q"])
    def test_m(self, a, b): pass

    def test_plain(self, a): pass


class TestClassMark:
    pytestmark = pytest.mark.parametrize("a", [-1, ""])

    @pytest.mark.parametrize("b", ["", None])
    def test_m(self, a, b): pass
