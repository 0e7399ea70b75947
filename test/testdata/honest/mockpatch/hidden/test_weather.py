import functools
import unittest
from unittest import mock

import weather


def frozen_clock(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mock.patch("weather.now", return_value=7.0):
            return fn(*args, **kwargs)
    return wrapper


@mock.patch("weather.fetch_celsius", return_value=21)
@mock.patch("weather.now", return_value=1000.0)
def test_report(now, fetch):
    assert weather.report("Oslo") == "Oslo: 21°C at 1000"
    fetch.assert_called_once_with("Oslo")


@mock.patch.object(weather, "fetch_celsius", return_value=-3)
def test_report_cold(fetch):
    with mock.patch("weather.now", return_value=5.0):
        assert weather.report("Tromsø") == "Tromsø: -3°C at 5"


@frozen_clock
def test_report_decorated():
    with mock.patch("weather.fetch_celsius", return_value=18):
        assert weather.report("Lima") == "Lima: 18°C at 7"


class ReportTest(unittest.TestCase):
    @mock.patch("weather.fetch_celsius", return_value=30)
    @mock.patch("weather.now", return_value=2.0)
    def test_hot(self, now, fetch):
        self.assertEqual(weather.report("Cairo"), "Cairo: 30°C at 2")
