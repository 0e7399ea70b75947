def check(value):
    return value
