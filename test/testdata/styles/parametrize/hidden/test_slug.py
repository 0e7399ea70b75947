import pytest

from slug import slug


@pytest.mark.parametrize("text,want", [("A b", "a-b"), ("Crème brûlée", "crème-brûlée"), pytest.param("x  y", "x-y", id="spaces")])
def test_slug(text, want):
    assert slug(text) == want


@pytest.mark.parametrize("sep", ["-", "_"], ids=["dash", "underscore"])
@pytest.mark.parametrize("text", ["One Two"])
def test_separator(text, sep):
    assert slug(text, sep) == "one" + sep + "two"


class TestSlug:
    class TestNested:
        def test_lower(self):
            assert slug("ABC") == "abc"


@pytest.mark.parametrize("text", ["a::b c"])
def test_colons(text):
    assert slug(text) == "a::b-c"
