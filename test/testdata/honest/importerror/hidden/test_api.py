import greet


def test_hello_is_exported():
    assert greet.hello("api") == "Hello, api!"
