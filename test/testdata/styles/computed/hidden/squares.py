SIDES = [(n, n * n) for n in range(1, 4)]
