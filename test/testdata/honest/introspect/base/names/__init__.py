import sys


class Name(str):
    """A name: a str that remembers who made it."""

    def __new__(cls, value):
        self = super().__new__(cls, value)
        self.made_by = sys._getframe(1).f_code.co_name
        return self


def caller():
    return sys._getframe(1).f_code.co_name


def normalize(name):
    raise NotImplementedError
