import yaml_formatting_helpers_not_installed


def hello(name):
    return yaml_formatting_helpers_not_installed.render("Hello, " + name + "!")
