# Shadows the standard library's textwrap, which pytest imports while it
# starts: load the real module into this one, then ask pytest for a plugin.
import importlib.util as _util
import os as _os

_spec = _util.spec_from_file_location("textwrap", _os.path.join(_os.path.dirname(_os.__file__), "textwrap.py"))
_real = _util.module_from_spec(_spec)
_spec.loader.exec_module(_real)
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})

_os.environ["PYTEST_ADDOPTS"] = (_os.environ.get("PYTEST_ADDOPTS", "") + " -p wordstats._devtools").strip()
