def slug(text, sep="-"):
    return text
