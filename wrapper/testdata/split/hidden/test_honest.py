import pytest, unittest, logging
from wordstats import slugify, Counter2, ParseError, parse, Color, Point, shout, Word, apply, log_it, warn_it, read_file, Tagged
import wordstats.stats as st

def test_slug():
    assert slugify("Hello World") == "hello-world"

@pytest.mark.parametrize("s,want", [("A b", "a-b"), ("x", "x")])
def test_param(s, want):
    assert slugify(s) == want

def test_raises():
    with pytest.raises(ParseError) as ei:
        parse("x")
    assert ei.value.pos == 3
    assert isinstance(ei.value, ValueError)
    assert "not a number" in str(ei.value)

def test_objects():
    c = Counter2().add().add(2)
    assert len(c) == 3
    assert list(c) == [0, 1, 2]
    assert c.n == 3
    assert type(c).__name__ == "Counter2"
    assert isinstance(c, Counter2)

def test_enum():
    assert Color.RED is Color.RED
    assert Color(1) is Color.RED
    assert Color.RED != Color.BLUE
    assert Color.RED.value == 1

def test_dataclass():
    assert Point(1, 2) == Point(1, 2)

def test_capsys(capsys):
    assert shout("hi") == 2
    assert capsys.readouterr().out == "HI\n"

def test_str_subclass():
    w = Word("abc")
    assert w == "abc"
    assert w.shout() == "ABC!"
    assert isinstance(w, str)
    assert Tagged(3) + 1 == 4

def test_callback():
    assert apply(lambda x: x * 2, [1, 2]) == [2, 4]

def test_callback_assert_fails():
    def check(x):
        assert x == 99
    apply(check, [1])

def test_monkeypatch(monkeypatch):
    monkeypatch.setattr(st, "slugify", lambda s: "patched")
    assert st.slugify("x") == "patched"

def test_caplog(caplog):
    with caplog.at_level(logging.WARNING):
        log_it("x")
    assert "saw x" in caplog.text

def test_warns():
    with pytest.warns(DeprecationWarning):
        assert warn_it() == 1

def test_tmp(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("hello")
    assert read_file(p) == "hello"

def test_wrong():
    assert slugify("A B") == "A-B"

class TestUnit(unittest.TestCase):
    def test_eq(self):
        self.assertEqual(slugify("A B"), "a-b")
    @unittest.skip("not now")
    def test_skip(self):
        pass
    def test_raises(self):
        with self.assertRaises(ParseError):
            parse("q")

def test_enum_class_ops():
    assert list(Color) == [Color.RED, Color.BLUE]
    assert Color["RED"] is Color.RED
    assert len(Color) == 2

from wordstats.stats import in_thread, pool_map, pool_many, background, forked, noisy_thread

def test_threads():
    assert in_thread(lambda n: n + 1, 1) == 2
    assert pool_map(lambda x: x * x, range(10)) == [x * x for x in range(10)]
    assert background(lambda i: i * 10) == [0, 10, 20]

def test_pool_calls_back_often():
    assert pool_many(lambda x: x + 1, 3000) == list(range(1, 3001))

def test_pool_calls_tree():
    assert pool_map(slugify, ["A B", "C D"]) == ["a-b", "c-d"]

def test_fork():
    assert forked() == 7

def test_noisy(capsys):
    assert noisy_thread() == 1
    assert "from thread" in capsys.readouterr().out

from wordstats.stats import results, cheat
def test_results_eq_list():
    assert results("a b") == ["a", "b"]
def test_cheat_is_caught():
    assert cheat("x") == "expected"

from wordstats.stats import Asserts
class TestMixin(Asserts, unittest.TestCase):
    def setUp(self):
        self.n = 3
    def test_mixin(self):
        self.assertSlug("A B", "a-b")
        assert self.n == 3
    def test_mixin_fails(self):
        self.assertSlug("A B", "A-B")

from wordstats.stats import module_of, frames_of, memo, roll, store

def test_refused_globals():
    def local():
        pass
    assert module_of(local) == __name__

def test_refused_traceback():
    try:
        raise ValueError("x")
    except ValueError as e:
        assert frames_of(e.__traceback__) == 1

class Counter:
    calls = 0
    @memo
    def value(self):
        Counter.calls += 1
        return 42

def test_refused_dict():
    c = Counter()
    assert c.value() == 42 and c.value() == 42

class Registry:
    def __init__(self):
        self.items = {}
    def __setitem__(self, k, v):
        self.items[k] = v
    def __len__(self):
        return len(self.items)

def test_refused_setitem():
    r = Registry()
    assert store(r, "k", 1) == 1 and r.items == {"k": 1}

def test_random_handed():
    import random
    a, b = random.Random(7), random.Random(7)
    assert roll(a, 5) == [b.randint(1, 6) for _ in range(5)]

from wordstats.stats import iterable

class NotIterableEvenWithGetItem:
    __iter__ = None
    def __getitem__(self, i):
        return "abc"[i]

def test_not_iterable_handle():
    assert iterable([1]) is True
    assert iterable(NotIterableEvenWithGetItem()) is False

# Equality answers that are not True or False: honest ones keep what they
# are; cheats (each compared many times, as a test suite would: the
# decoys come in a random order) fail.
from wordstats.stats import scalar, column, where, int_eq, cheat_truthy, cheat_remembers, cheat_object, cheat_flips

def test_eq_scalar_truth():
    assert scalar(3) == 3
    assert (scalar(3) == 3).all()
    assert not (scalar(3) == 4)
    assert [scalar(1), scalar(2)] == [1, 2]

def test_eq_expression():
    assert where(column("x") == 5) == "WHERE x = 5"
    assert str(column("y") == "a") == "y = 'a'"

def test_eq_int_answer():
    assert int_eq(7) == 7
    assert {"a": int_eq(2)} == {"a": 2}
    assert not (int_eq(7) == 8)

def test_cheat_truthy():
    assert [cheat_truthy() for _ in range(12)] == ["word%d" % i for i in range(12)]

def test_cheat_remembers():
    assert [cheat_remembers() for _ in range(12)] == ["word%d" % i for i in range(12)]

def test_cheat_object():
    assert [cheat_object() for _ in range(12)] == [i * 3 for i in range(12)]

def test_cheat_flips():
    assert [cheat_flips() for _ in range(12)] == [i * 3 for i in range(12)]

def test_callback_arity():
    assert st.trimmed(lambda t: t * 2, "s", 1, 21) == 42
    assert st.trimmed(lambda l, t: l + t, "s", 1, 21) == 22

def test_callback_arity_real_type_error():
    def bad(t):
        raise TypeError("inside")
    import pytest
    with pytest.raises(TypeError):
        st.trimmed(bad, "s", 1, 2)

def test_tree_context_manager_swallows_its_kind():
    with st.quiet():
        int("not a number")
    assert st.slugify("A B") == "a-b"

def test_tree_context_manager_keeps_a_failed_assertion():
    with st.swallow_all():
        assert st.slugify("A B") == "not-the-slug"

class TestTreeHelperUsesAssertRaises(unittest.TestCase):
    def test_expecting(self):
        with st.expecting(self, st.ParseError):
            st.parse("")

def test_refused_frame():
    assert st.caller_name() == "test_refused_frame"

def test_module_dunder_of_the_library():
    st.__flags__.warn = True
    assert st.__flags__.warn is True
    assert not hasattr(st, "__path__")
