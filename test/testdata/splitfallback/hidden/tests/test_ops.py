# testfirst-canary: tfc-7d2e91c0b5a3f648
from textops import ops


def test_map_upper():
    result = ops.map_words(lambda w: w.upper(), "ab cd")
    assert result == ["AB", "CD"]


def test_map_len():
    result = ops.map_words(lambda w: len(w), "a bcd")
    assert result == [1, 3]


def test_count_with_key():
    result = ops.count_words("A b a", key=lambda w: w.lower())
    assert result == {"a": 2, "b": 1}


def test_frames_of_traceback():
    try:
        raise ValueError("x")
    except ValueError as e:
        result = ops.frames(e.__traceback__)
    assert result == 1
