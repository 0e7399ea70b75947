from greet.core import hello
