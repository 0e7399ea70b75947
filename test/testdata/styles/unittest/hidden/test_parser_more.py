import test_parser
from numparse import parse


class SignedParser(test_parser.Parser):
    def test_negative_float(self):
        self.assertEqual(parse("-0.5"), -0.5)
