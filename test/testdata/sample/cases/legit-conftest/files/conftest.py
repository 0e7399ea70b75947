import pytest


@pytest.fixture
def sample_text():
    """A short text the repo's own tests share."""
    return "The cat saw the dog. The dog saw a bird!"
