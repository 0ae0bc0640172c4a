"""memflow ui's browser tests: a real ``memflow ui`` process on a real PostgreSQL, driven by a
real headless Chromium (tests/support/browser.py). Skipped, with the reason printed, only where
no Chromium is installed and none can be (tests/support/browser.py ``ensure_chromium``)."""

from __future__ import annotations

import pytest

from ..servers.conftest import module_db
from ..support.browser import ensure_chromium

__all__ = ["module_db"]


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of the Chromium binary the tests drive (installed with apt-get if it can be)."""
    path, reason = ensure_chromium()
    if path is None:
        print(f"memflow ui browser tests skipped: {reason}")
        pytest.skip(f"no Chromium for the browser tests: {reason}")
    return path
