def hello(name):
    raise NotImplementedError
