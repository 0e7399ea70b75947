def parse(text):
    raise NotImplementedError
