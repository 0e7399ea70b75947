import pytest

import temps


def test_freezing():
    assert temps.to_fahrenheit(0) == 32


def test_boiling():
    assert temps.to_fahrenheit(100) == 212


@pytest.mark.xfail(reason="kelvin is not supported yet", strict=False)
def test_kelvin_known_gap():
    assert temps.to_kelvin(0) == 273.15


@pytest.mark.xfail(reason="strings are not parsed")
def test_string_input():
    assert temps.to_fahrenheit("10") == 50


def test_imperative_xfail():
    pytest.xfail("rounding policy undecided")


@pytest.mark.skip(reason="slow")
def test_marked_skip():
    assert temps.to_fahrenheit(-40) == -40
