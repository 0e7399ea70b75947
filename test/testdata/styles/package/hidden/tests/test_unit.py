from roman import to_roman

from .support import cases


def test_module_name():
    assert __name__ == "tests.test_unit"


def test_numerals_from_data_file():
    for number, numeral in cases().items():
        assert to_roman(int(number)) == numeral
