import time


def now():
    return time.time()


def fetch_celsius(city):
    raise RuntimeError("no network in tests")


def report(city):
    return f"{city}: {fetch_celsius(city)}°C at {int(now())}"
