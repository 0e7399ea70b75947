def to_roman(n):
    return ""
