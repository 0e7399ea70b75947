import pytest

from slug import slugify


@pytest.mark.parametrize("text,want", [
    ("Hello World", "hello-world"),
    ("a::b", "a-b"),
    ("x[1]", "x-1"),
    ("  spaced  out ", "spaced-out"),
    ("Grüße", "gr-e"),
    ("path/to/thing", "path-to-thing"),
    ("", ""),
])
def test_slugify(text, want):
    assert slugify(text) == want


@pytest.mark.parametrize("text", ["A B", "a b"], ids=["upper case", "lower/case"])
def test_named_ids(text):
    assert slugify(text) == "a-b"


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("sep", ["-", "_"])
def test_stacked(n, sep):
    assert slugify(sep.join(["x"] * n)) == "-".join(["x"] * n)
