"""Test-wide settings: dynamo must see breakpoint() as a call, never stop in a debugger."""

import os

os.environ.setdefault("PYTHONBREAKPOINT", "0")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(os.path.dirname(__file__), "..", ".pytest_cache", "inductor"))
