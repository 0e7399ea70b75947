from words import split_words


def slug(text):
    return "-".join(w.lower() for w in split_words(text))
