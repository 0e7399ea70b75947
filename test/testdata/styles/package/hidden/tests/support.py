import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def cases():
    with open(os.path.join(HERE, "data", "numerals.json")) as f:
        return json.load(f)
