"""A real headless Chromium for memflow ui's tests and screenshots: Debian's ``chromium`` package
driven through playwright's Python API (never ``playwright install``: no browser is downloaded).

:func:`ensure_chromium` finds the browser on PATH or installs Debian's ``chromium`` with
``apt-get`` (as root, or through password-less sudo: CI's fresh machines), and otherwise says
what to do. The browser tests fail with that message rather than skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

NAMES = ("chromium", "chromium-browser")
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
# apt-get waits this long for another apt/dpkg run to release its lock instead of failing.
APT_LOCK_WAIT_S = 300


def find_chromium(search_path: str | None = None) -> str | None:
    """The first Chromium on ``search_path`` (default: PATH)."""
    for name in NAMES:
        found = shutil.which(name, path=search_path)
        if found:
            return found
    return None


def _say(text: str) -> None:
    print(f"memflow ui tests: {text}", file=sys.__stderr__, flush=True)


def _privilege() -> list[str] | None:
    """The prefix that runs apt-get as root ([] when root), None when nothing can."""
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    if sudo and subprocess.run([sudo, "-n", "true"], capture_output=True).returncode == 0:
        return [sudo, "-n"]
    return None


def _run(cmd: list[str]) -> str | None:
    """None when ``cmd`` succeeds, else why it did not (the end of its output)."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return f"`{' '.join(cmd)}` did not finish in {APT_TIMEOUT_S} s"
    if done.returncode == 0:
        return None
    out = (done.stdout[-1000:] + done.stderr[-1000:]).strip()
    return f"`{' '.join(cmd)}` failed ({done.returncode}): {out[-600:]}"


def ensure_chromium(
    search_path: str | None = None, privilege: list[str] | None = None
) -> tuple[str | None, str]:
    """(the browser's path, "") or (None, what to do). When no Chromium is on ``search_path``
    (default PATH), installs Debian's ``chromium`` (no recommends) with the apt-get found there,
    run as root or through ``privilege`` (default: [] as root, password-less sudo otherwise).
    The package lists are refreshed only when the install fails without them (a fresh image
    has none; stale ones point at removed versions)."""
    found = find_chromium(search_path)
    if found:
        return found, ""
    todo = "install Chromium so that `chromium` is on PATH (Debian: `apt-get install chromium`)"
    apt = shutil.which("apt-get", path=search_path)
    if not apt:
        return None, f"no Chromium on PATH and no apt-get to install one: {todo}"
    prefix = _privilege() if privilege is None else privilege
    if prefix is None:
        return None, f"no Chromium on PATH, and apt-get needs root or password-less sudo: {todo}"
    start = time.monotonic()
    _say("no Chromium on PATH: installing Debian's chromium with apt-get (once per machine)")
    apt_get = [*prefix, apt, "-q", "-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}"]
    install = [*apt_get, "install", "-y", "--no-install-recommends", "chromium"]
    failed = _run(install)
    if failed:
        failed = _run([*apt_get, "update"]) or _run(install)
    if failed:
        return None, f"{failed}\n{todo}"
    found = find_chromium(search_path)
    if not found:
        return None, f"apt-get installed chromium but no {' or '.join(NAMES)} is on PATH"
    _say(f"chromium installed in {time.monotonic() - start:.0f} s: {found}")
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
