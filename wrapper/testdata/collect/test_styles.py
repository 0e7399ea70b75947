import pytest, unittest
class TestOuter:
    class TestInner:
        def test_in(self): pass
    def test_out(self): pass
class Base(unittest.TestCase):
    class TestNested:
        def test_n(self): pass
    def test_b(self): pass
@pytest.mark.parametrize("a", [1, 2.5, "x y", "é", b"\xff", None, True, (1,2), -3, "", "a\nb", "\x00"])
def test_one(a): pass
@pytest.mark.parametrize("a,b", [(1,2),(3,4)], ids=["p", "q"])
@pytest.mark.parametrize("c", ["u","v"])
def test_stack(a,b,c): pass
@pytest.mark.parametrize(("a","b"), [pytest.param(1,2,id="named"), pytest.param(3,4), (5,6)])
def test_param(a,b): pass
@pytest.mark.parametrize("a", [1,1,2])
def test_dup(a): pass
@pytest.mark.parametrize("a", [int, len, pytest.mark, 1j, float('nan')])
def test_obj(a): pass
@pytest.mark.parametrize("a", [1,2], ids=[None, "x"])
def test_idsnone(a): pass
@pytest.mark.parametrize("a", ["x","x"], ids=["same","same"])
def test_sameids(a): pass
@pytest.mark.parametrize("a", [])
def test_empty(a): pass
class TestK:
    @pytest.mark.parametrize("a", [1,2])
    def test_m(self, a): pass
