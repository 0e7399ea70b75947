import pytest

from texts import POEM


@pytest.fixture
def poem():
    return POEM
