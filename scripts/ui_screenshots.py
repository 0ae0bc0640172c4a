"""The screenshots of ``memflow ui`` in docs/ui/: memflow's own sample memos and conversation
(memflow/samples, what ``memflow demo`` memorises) with one fact corrected, served by a real
``memflow ui`` process and shot in Debian's headless Chromium (tests/support/browser.py).

    .venv/bin/python -m scripts.ui_screenshots            # docs/ui/{search,episode}.png
    .venv/bin/python -m scripts.ui_screenshots --all --out /tmp/shots --database-url URL

Without --database-url it runs on a fresh embedded store in a temporary home (removed after).
CJK text needs a CJK font in the browser (Debian: fonts-noto-cjk).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from memflow.cli.demo import SAMPLES
from memflow.db.embedded import EmbeddedServer
from memflow.memory import Memory
from tests.servers.conftest import free_port, server_process
from tests.support.browser import browser_context, ensure_chromium

DATASET = "samples"
QUESTION = "When is the read cut-over to PostgreSQL planned?"
FACT = "Tom Becker reviews every schema change"
CORRECTION = "Priya Raman owns the migration; Dana Whitfield reviews every schema change."
RUNBOOK, RUNBOOK_CHANGE = "release-rollback.en.md", ("20 minutes", "45 minutes")
VIEWPORT = {"width": 1280, "height": 860}
PALETTE = 64
# docs/ui/ holds the first two (the README shows search.png); --all also shoots the rest.
PAGES = ("search", "episode", "datasets", "dataset", "history")
COMMITTED = PAGES[:2]


def prepare(url: str | None, home: Path | None, embedder: str) -> dict[str, str]:
    """Memorise the samples (sources named by their file names) and correct one fact: the
    episode, the point corrected, and the dataset's name."""
    here, notes = Path.cwd(), Path(tempfile.mkdtemp(prefix="memflow-samples-"))
    for p in SAMPLES.iterdir():
        if p.suffix in {".md", ".json"}:
            shutil.copy(p, notes / p.name)
    os.chdir(notes)
    try:
        with Memory.open(url, home=home, embedder=embedder) as mem:
            mem.drop_dataset(DATASET)
            ds = mem.dataset(DATASET)
            ds.memorize(sorted(p.name for p in notes.iterdir()))
            runbook = notes / RUNBOOK  # its second version: the watch time changed
            runbook.write_text(runbook.read_text(encoding="utf-8").replace(*RUNBOOK_CHANGE))
            ds.memorize(RUNBOOK)
            found = ds.search(FACT, top_k=1, display="highly_related")
            point = next(u.node_id for u in found.context_units if u.node_id is not None)
            ds.correct(point, CORRECTION, actor="docs")
            episode = ds.search(QUESTION, top_k=1).results[0].episode_id
    finally:
        os.chdir(here)
        shutil.rmtree(notes, ignore_errors=True)
    return {"point": str(point), "episode": str(episode)}


@contextmanager
def ui_server(url: str | None, home: Path | None, embedder: str) -> Iterator[str]:
    """``memflow ui`` on a free loopback port (no keys) until the block ends: its base URL."""
    port = free_port()
    cmd = [sys.executable, "-m", "memflow.cli", "ui", "--port", str(port), "--embedder", embedder]
    cmd += ["--database-url", url] if url else ["--home", str(home)]
    with server_process(cmd, port, {"MEMFLOW_API_KEYS": ""}):
        yield f"http://127.0.0.1:{port}"


def _shrink(png: Path) -> None:
    """Re-save ``png`` with a palette of PALETTE colours (a third of the size; the pages are flat
    colours and text). Pillow comes with the dev extras (llama-index-core); without it the PNG
    stays as Chromium wrote it."""
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(png) as shot:
        flat = shot.convert("RGB").quantize(colors=PALETTE, method=Image.Quantize.MEDIANCUT)
    flat.save(png, optimize=True)


def shoot(base: str, out: Path, ids: dict[str, str], pages: Sequence[str]) -> list[Path]:
    """Screenshots of ``pages`` (names from PAGES) into ``out``: the paths written."""
    path, reason = ensure_chromium()
    if path is None:
        raise SystemExit(f"no Chromium to take the screenshots: {reason}")
    out.mkdir(parents=True, exist_ok=True)
    d = quote(DATASET)
    written = []
    with browser_context(path, viewport=VIEWPORT) as context:
        page = context.new_page()

        def save(name: str, full: bool = False, **clip: int) -> None:
            target = out / f"{name}.png"
            page.screenshot(path=str(target), full_page=full, clip=clip or None)
            _shrink(target)
            written.append(target)

        def episode() -> None:  # the tree opened down to the point the correction closed
            page.goto(f"{base}/ui/episode?d={d}&id={ids['episode']}")
            point = page.locator(f"li.node[data-id='{ids['point']}']")
            facet = page.locator("li.node.kind-facet").filter(has=point)
            facet.locator(":scope > details > summary").click()
            point.locator(":scope > details > summary").click()
            box = point.bounding_box()
            bottom = int(box["y"] + box["height"] + 16) if box else 1200
            save("episode", full=True, x=0, y=0, width=VIEWPORT["width"], height=bottom)

        urls = {  # the pages shot as they load
            "search": f"/ui/search?d={d}&q={quote(QUESTION)}&k=2&budget=100",
            "datasets": "/ui/",
            "dataset": f"/ui/dataset?d={d}",
            "history": f"/ui/history?d={d}&id={ids['point']}",
        }
        for name in pages:
            if name == "episode":
                episode()
            else:
                page.goto(base + urls[name])
                save(name, full=name == "search")
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/ui", help="directory for the PNGs (default docs/ui)")
    ap.add_argument("--database-url", default=None, help="a store (default: a temporary one)")
    ap.add_argument("--embedder", default="local", help="embedder spec (default local)")
    ap.add_argument(
        "--all", action="store_true", help=f"also shoot {', '.join(PAGES[2:])} (not committed)"
    )
    args = ap.parse_args(argv)
    home = None if args.database_url else Path(tempfile.mkdtemp(prefix="memflow-shots-"))
    try:
        ids = prepare(args.database_url, home, args.embedder)
        with ui_server(args.database_url, home, args.embedder) as base:
            for target in shoot(base, Path(args.out), ids, PAGES if args.all else COMMITTED):
                print(target)
    finally:
        if home is not None:
            EmbeddedServer(home).destroy()
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
