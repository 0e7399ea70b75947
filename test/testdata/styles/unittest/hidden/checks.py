from numparse import parse


class IntegerChecks:
    """Test methods shared by the parser's test cases."""

    def test_integer(self):
        self.assertEqual(parse("12"), 12)

    def test_integers(self):
        for text, want in [("1", 1), (" 2", 2), ("-3", -3)]:
            with self.subTest(text=text):
                self.assertEqual(parse(text), want)
