def test_hello_world():
    import greet
    assert greet.hello("world") == "Hello, world!"


def test_hello_name():
    from greet import hello
    assert hello("Ada") == "Hello, Ada!"
