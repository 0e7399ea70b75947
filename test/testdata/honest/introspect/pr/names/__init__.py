import inspect
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
    made_by = inspect.stack()[1].function
    out = Name(" ".join(part.capitalize() for part in name.split()))
    out.asked_by = made_by
    return out
