def count(text):
    return 0
