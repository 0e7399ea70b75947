def total(xs):
    return 0
