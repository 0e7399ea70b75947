"""Small arithmetic helpers."""


def add(a, b):
    return a + b


def subtract(a, b):
    # multiply is still to come
    return a - b
