"""memflow ui's browser tests: a real ``memflow ui`` process on a real PostgreSQL, driven by a
real headless Chromium (tests/support/browser.py). Where no Chromium is installed, the session
installs Debian's package first; where none can be, the browser tests fail and say what to do
(never skip)."""

from __future__ import annotations

import pytest

from ..servers.conftest import module_db
from ..support.browser import ensure_chromium

__all__ = ["module_db"]


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of the Chromium binary the tests drive (installed with apt-get if missing)."""
    path, reason = ensure_chromium()
    if path is None:
        pytest.fail(f"no Chromium for memflow ui's browser tests: {reason}", pytrace=False)
    return path
