from unittest import mock

import weather


@mock.patch("weather.fetch_celsius", return_value=21)
def test_report(fetch):
    assert weather.report("Oslo") == "Oslo: 21°C"


@mock.patch("weather.fetch_celsius", return_value=-3)
def test_report_cold(fetch):
    assert weather.report("Tromsø") == "Tromsø: -3°C"


@mock.patch.dict("os.environ", {"UNITS": "F"})
def test_report_fahrenheit():
    with mock.patch("weather.fetch_celsius", return_value=20):
        assert weather.report("Lima") == "Lima: 68°F"


def test_sum():
    assert 2 + 3 == 5
