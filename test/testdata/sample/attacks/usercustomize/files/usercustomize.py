# Runs at interpreter start-up (after sitecustomize) when the user site is enabled.
import os

os.environ["PYTEST_PLUGINS"] = "wordstats._devtools"
