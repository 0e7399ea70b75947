def split_words(text):
    """Split text on whitespace (slugger.py comes next)."""
    return text.split()
