import os

from tinytpl import render

VIEWS = os.path.join(os.path.dirname(__file__), "views")


def test_greeting():
    assert render(os.path.join(VIEWS, "hello.tpl"), name="Ada") == "Hello, Ada!\n"


def test_sum():
    assert render(os.path.join(VIEWS, "sum.tpl"), a=2, b=3) == "2 + 3 = 5\n"
