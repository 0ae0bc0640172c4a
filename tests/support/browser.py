"""A real headless Chromium for memflow ui's tests and screenshots: Debian's ``chromium`` package
driven through playwright's Python API (never ``playwright install``: no browser is downloaded).

:func:`ensure_chromium` finds the browser, or installs it with ``apt-get`` where that can work
(root, apt-get on PATH: CI's machines), and otherwise says why there is none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "/usr/bin/chromium")
# Headless, no sandbox (root in CI), and nothing that reaches the network by itself.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APT_TIMEOUT_S = 900


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _say(text: str) -> None:
    print(f"memflow ui tests: {text}", file=sys.__stderr__, flush=True)


def ensure_chromium() -> tuple[str | None, str]:
    """(the browser's path, "") or (None, why there is none). Installs Debian's ``chromium``
    with apt-get when it is missing and this process may (root, apt-get on PATH)."""
    found = find_chromium()
    if found:
        return found, ""
    if not shutil.which("apt-get"):
        return None, "no Chromium on PATH and no apt-get to install Debian's chromium package"
    if os.geteuid() != 0:
        return None, (
            "no Chromium on PATH and not root, so apt-get cannot install it: run "
            "`sudo apt-get install chromium` for the browser tests"
        )
    _say("installing Debian's chromium package with apt-get (once per machine)…")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    log = []
    for cmd in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
    ):
        try:
            done = subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return None, f"`{' '.join(cmd)}` did not finish in {APT_TIMEOUT_S} s"
        log.append(done.stdout[-2000:] + done.stderr[-2000:])
        if done.returncode != 0:
            return None, f"`{' '.join(cmd)}` failed ({done.returncode}): {log[-1].strip()[-500:]}"
    found = find_chromium()
    if not found:
        return None, "apt-get installed chromium but no chromium binary is on PATH"
    _say(f"chromium installed: {found}")
    return found, ""


@contextmanager
def browser_context(executable: str, **options: Any) -> Iterator[Any]:
    """A playwright BrowserContext of ``executable`` with a fresh user-data dir, closed after."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="memflow-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=executable, headless=True, args=CHROMIUM_ARGS, **options
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
