import pytest


@pytest.fixture
def poem():
    """Overrides the parent conftest's fixture below this directory."""
    return "one two"
