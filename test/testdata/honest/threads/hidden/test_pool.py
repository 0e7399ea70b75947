import subprocess
import sys
import threading

import pool


def test_squares():
    assert pool.squares([1, 2, 3]) == [1, 4, 9]


def test_squares_from_threads():
    results = {}

    def work(i):
        results[i] = pool.squares([i])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == {i: i * i for i in range(5)}


def test_background_total():
    assert pool.background_total([1, 2]) == 5


def test_in_a_subprocess():
    out = subprocess.run([sys.executable, "-c", "import pool; print(pool.squares([4]))"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[16]"


def test_pytest_in_a_subprocess(tmp_path):
    (tmp_path / "test_inner.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    import pool as again
    assert again.squares([2]) == [4]
