def parse(text):
    text = text.strip()
    return float(text) if "." in text else int(text)
