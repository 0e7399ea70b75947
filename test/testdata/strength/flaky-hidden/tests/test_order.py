import os

MARKER = "/tmp/testfirst-order-marker"


def test_leaves_a_marker():
    with open(MARKER, "w") as f:
        f.write("left behind\n")
    assert os.path.exists(MARKER)


def test_expects_a_clean_tmp():
    assert not os.path.exists(MARKER)
