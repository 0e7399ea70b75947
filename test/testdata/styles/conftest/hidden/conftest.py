import pytest

import wordcount
from texts import POEM


@pytest.fixture
def poem():
    return POEM


@pytest.fixture
def counter():
    """A fixture that uses the code under test: the hidden conftest loads
    once the tree is importable."""
    return wordcount.count
