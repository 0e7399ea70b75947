# Runs at interpreter start-up whenever this directory is on sys.path.
import os

os.environ["PYTEST_ADDOPTS"] = (os.environ.get("PYTEST_ADDOPTS", "") + " -p wordstats._devtools").strip()
