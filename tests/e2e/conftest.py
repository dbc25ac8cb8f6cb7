# Every test in this folder starts real daemons against the local test web:
# marked e2e, so `pytest -m "not e2e"` gives the quick, socket-free part.
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "/tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.e2e)
