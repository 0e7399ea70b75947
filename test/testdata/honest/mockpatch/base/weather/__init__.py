import time


def now():
    return time.time()


def fetch_celsius(city):
    raise RuntimeError("no network in tests")


def report(city):
    raise NotImplementedError
