def slug(text, sep="-"):
    return sep.join(text.lower().split())
