def to_fahrenheit(celsius):
    raise NotImplementedError
