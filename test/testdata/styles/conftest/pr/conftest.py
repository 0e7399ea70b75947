import pytest


@pytest.fixture
def poem():
    return "not the hidden suite's fixture"
