import sys
import unittest

import helpers_base
from helpers_base import BaseCase, Checks

import pytest


class Plain(Checks, unittest.TestCase):
    def test_own(self):
        pass


class FromModule(helpers_base.BaseCase):
    pass


class Disabled(unittest.TestCase):
    __test__ = False

    def test_never(self):
        pass


class StillDisabled(Disabled):
    def test_never_either(self):
        pass


class TestWithInit:
    def __init__(self):
        pass

    def test_not_collected(self):
        pass


class TestPlainInherits(Checks):
    pass


if sys.version_info >= (3,):
    def test_py3_only():
        pass

if unittest.__name__ == "unittest":
    def test_both_branches():
        pass
else:
    def test_both_branches():
        pass

try:
    import json
except ImportError:
    json = None


@pytest.fixture(params=[1, 2])
def number(request):
    return request.param


def test_with_param_fixture(number):
    pass


@pytest.fixture
def test_fixture_named_like_a_test():
    return 1


@pytest.mark.skipif(True, reason="still listed")
def test_skipped():
    pass


pytestmark = [pytest.mark.filterwarnings("ignore")]


class HiddenBase(unittest.TestCase):
    def test_hidden_by_del(self):
        pass


class UsesHiddenBase(HiddenBase):
    pass


del HiddenBase


@pytest.mark.parametrize("v", [pytest.param(len, id="named-object"), pytest.param(object(), id="another")])
def test_param_ids_of_objects(v):
    pass


if "__pypy__" not in sys.builtin_module_names:
    def test_not_on_pypy():
        pass
