import threading
from concurrent.futures import ThreadPoolExecutor


def _square(n):
    return n * n


def squares(numbers):
    with ThreadPoolExecutor(max_workers=4) as ex:
        return list(ex.map(_square, numbers))


def background_total(numbers):
    out = []
    t = threading.Thread(target=lambda: out.append(sum(squares(numbers))))
    t.start()
    t.join()
    return out[0]
