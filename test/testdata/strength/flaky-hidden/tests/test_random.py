import random

import pytest


@pytest.mark.parametrize("case", range(40))
def test_coin(case):
    assert random.random() < 0.5
