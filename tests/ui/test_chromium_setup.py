"""How the browser tests obtain Chromium on a fresh machine (tests/support/browser.py
``ensure_chromium``), against a scripted ``apt-get`` on a private PATH: the real one would
change this machine, and here Chromium is already installed."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ..support.browser import ensure_chromium

# Records each call; ``install`` fails until ``update`` has run once (a fresh image has no package
# lists) unless LISTS exists, and then puts an executable ``chromium`` next to itself.
FAKE_APT = """#!/bin/sh
here=$(dirname "$0")
echo "$*" >> "$here/calls"
case " $* " in
  *" update"*) touch "$here/LISTS"; exit 0 ;;
  *" install "*)
    if [ -n "$FAIL" ] || [ ! -e "$here/LISTS" ]; then
      echo "E: Unable to locate package chromium" >&2; exit 100
    fi
    printf '#!/bin/sh\\n' > "$here/chromium"; chmod +x "$here/chromium"; exit 0 ;;
esac
exit 1
"""


def _bin(tmp_path: Path, *, lists: bool = False) -> Path:
    apt = tmp_path / "apt-get"
    apt.write_text(FAKE_APT)
    apt.chmod(apt.stat().st_mode | stat.S_IXUSR)
    if lists:
        (tmp_path / "LISTS").touch()
    return tmp_path


def _calls(bin_dir: Path) -> list[str]:
    log = bin_dir / "calls"
    return log.read_text().splitlines() if log.exists() else []


def test_a_chromium_on_path_is_used_and_nothing_is_installed(tmp_path: Path) -> None:
    bin_dir = _bin(tmp_path)
    (bin_dir / "chromium-browser").write_text("#!/bin/sh\n")
    (bin_dir / "chromium-browser").chmod(0o755)
    path, reason = ensure_chromium(str(bin_dir), privilege=[])
    assert (path, reason) == (str(bin_dir / "chromium-browser"), "")
    assert _calls(bin_dir) == []


def test_a_fresh_machine_refreshes_the_lists_and_installs_chromium_without_recommends(
    tmp_path: Path,
) -> None:
    bin_dir = _bin(tmp_path)
    path, reason = ensure_chromium(str(bin_dir), privilege=[])
    assert (path, reason) == (str(bin_dir / "chromium"), "")
    install, update, again = _calls(bin_dir)
    assert install == again and update.endswith(" update")
    assert install.endswith(" install -y --no-install-recommends chromium"), install
    assert "DPkg::Lock::Timeout=" in install  # waits for another apt run instead of failing


def test_current_lists_install_at_once(tmp_path: Path) -> None:
    bin_dir = _bin(tmp_path, lists=True)
    path, _ = ensure_chromium(str(bin_dir), privilege=[])
    assert path == str(bin_dir / "chromium")
    assert [c.split()[-4] for c in _calls(bin_dir)] == ["install"]


def test_an_install_that_fails_says_why_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL", "1")
    bin_dir = _bin(tmp_path)
    path, reason = ensure_chromium(str(bin_dir), privilege=[])
    assert path is None
    assert "Unable to locate package chromium" in reason and "apt-get install chromium" in reason


def test_without_apt_get_the_reason_says_what_to_install(tmp_path: Path) -> None:
    path, reason = ensure_chromium(str(tmp_path), privilege=[])
    assert path is None
    assert "no apt-get" in reason and "`chromium` is on PATH" in reason
