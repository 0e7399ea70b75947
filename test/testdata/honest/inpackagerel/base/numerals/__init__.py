"""Roman numerals: the package whose tests live inside it, in
numerals/tests, as a package of its own."""

_TABLE = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n):
    """The roman numeral of n, 1 to 3999."""
    if not 0 < n < 4000:
        raise ValueError("out of range: %r" % (n,))
    out = []
    for value, letters in _TABLE:
        while n >= value:
            out.append(letters)
            n -= value
    return "".join(out)


def from_roman(s):
    """The number roman numeral s stands for (not written yet)."""
    raise NotImplementedError("from_roman")
