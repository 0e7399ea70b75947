import pytest

pytest.skip("the export format is for a later release", allow_module_level=True)


def test_export():
    assert False
