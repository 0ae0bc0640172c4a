"""What the front doors cost: search latency in-process vs HTTP (`memflow serve`) vs MCP over
streamable HTTP (`memflow mcp --transport http`), same queries, same store, same run.

The store is small and generated from the synthetic vocabulary, and every door uses the ``hash``
embedder: embedding a query costs microseconds, so the differences are the doors' own overhead
(serialisation, the loopback round trip, the server's event loop and thread hop). Queries are
interleaved door by door so drifting load on a shared machine hits all three alike.

    .venv/bin/python -m benchmarks.doors            # writes docs/benchmarks/doors.{json,md}
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common
from benchmarks.synth import WORDS

DATASET = "doors"
EMBEDDER = "hash"
_PEOPLE = ("Mira", "Dario", "Ines", "Tomas", "Yuki", "Omar", "Lena", "Ravi")
_MONTHS = ("March", "April", "May", "June", "July")


def notes(rng: np.random.Generator, count: int) -> list[str]:
    """Short Markdown notes of invented project facts built from the synthetic vocabulary."""
    out = []
    for i in range(count):
        topic = " ".join(rng.choice(WORDS, 2, replace=False))
        lines = [f"# {topic.title()} notes {i}", ""]
        for _ in range(int(rng.integers(4, 8))):
            a, b, c = rng.choice(WORDS, 3, replace=False)
            who = rng.choice(_PEOPLE)
            day = f"{rng.choice(_MONTHS)} {int(rng.integers(1, 28))}"
            lines.append(f"{who} moved the {a} {b} to {day} after the {c} review.")
        out.append("\n".join(lines) + "\n")
    return out


def queries(rng: np.random.Generator, count: int) -> list[str]:
    return [
        f"When is the {a} {b} with {rng.choice(_PEOPLE)}?"
        for a, b in (rng.choice(WORDS, 2, replace=False) for _ in range(count))
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _server(url: str, *args: str) -> Iterator[tuple[int, int]]:
    """``memflow <args>`` on a free loopback port, until it accepts connections."""
    port = _free_port()
    cmd = [sys.executable, "-m", "memflow.cli", *args, "--port", str(port)]
    cmd += ["--database-url", url, "--embedder", EMBEDDER]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        err.seek(0)
                        raise RuntimeError(
                            f"{args[0]} did not start: {err.read().decode()}"
                        ) from None
                    time.sleep(0.1)
            yield port, proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _cpu_ms(pid: int) -> float:
    """CPU time process ``pid``'s live threads have used so far, ms, to the nanosecond (the
    scheduler's own account, /proc/<pid>/task/*/schedstat; psutil's counts 10 ms clock ticks)."""
    total = 0
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that just ended
    return total / 1e6


def _server_timing(header: str | None) -> dict[str, float]:
    """``app;dur=12.3, cpu;dur=4.5`` -> {"app": 12.3, "cpu": 4.5}."""
    out = {}
    for part in (header or "").split(","):
        name, _, dur = part.strip().partition(";dur=")
        if dur:
            out[name] = float(dur)
    return out


class _Stdlib:
    """A keep-alive ``http.client`` connection: the lightest Python client, to tell the
    server's share of the overhead from httpx's."""

    def __init__(self, port: int) -> None:
        import http.client

        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(self, path: str, payload: dict[str, Any]) -> tuple[int, bytes, str | None]:
        import http.client
        import json

        body = json.dumps(payload).encode()
        for attempt in (1, 2):  # as httpx does: once more on a connection the server closed
            try:
                head = {"content-type": "application/json"}
                self.conn.request("POST", path, body=body, headers=head)
                resp = self.conn.getresponse()
                return resp.status, resp.read(), resp.getheader("server-timing")
            except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                self.conn.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


DOORS = ("dataset_api", "async_api", "service", "http", "http_stdlib", "mcp_http")
SERVED = ("http", "http_stdlib", "mcp_http")  # doors with a server process
IDLE_SAMPLE_S = 3.0


def measure(url: str, qs: Sequence[str], rounds: int, warmup: int) -> dict[str, Any]:
    import json

    import anyio
    import httpx
    from mcp import Client

    from memflow.aio import AsyncMemory
    from memflow.memory import Memory
    from memflow.service import Service

    body = {"top_k": 10, "display": "highly_related"}
    times: dict[str, list[float]] = {k: [] for k in DOORS}
    # Per request, for the HTTP doors: the server's own time on the search (Server-Timing app),
    # its thread's CPU time (cpu), and the rest of the round trip (wall - app).
    inside: dict[str, list[float]] = {"http": [], "http_stdlib": []}
    inside_cpu = {"http": 0.0, "http_stdlib": 0.0}
    # CPU time per door: this process's for the call, plus the server's (HTTP, MCP) over the run.
    client_cpu = dict.fromkeys(DOORS, 0.0)
    server_cpu = dict.fromkeys(SERVED, 0.0)
    idle_rate = dict.fromkeys(SERVED, 0.0)  # a server's CPU ms per ms while idle
    mismatches = 0
    path = f"/v1/datasets/{DATASET}/search"
    with (
        Memory.open(url, embedder=EMBEDDER) as mem,
        _server(url, "serve") as (api_port, api_pid),
        _server(url, "serve") as (std_port, std_pid),
        _server(url, "mcp", "--transport", "http") as (mcp_port, mcp_pid),
    ):
        service = Service(mem)
        ds = mem.dataset(DATASET, create=False)
        pids = {"http": api_pid, "http_stdlib": std_pid, "mcp_http": mcp_pid}

        async def run() -> None:
            nonlocal mismatches
            http = httpx.Client(base_url=f"http://127.0.0.1:{api_port}", timeout=60)
            std = _Stdlib(std_port)
            async with (
                Client(f"http://127.0.0.1:{mcp_port}/mcp") as mcp,
                AsyncMemory.open(url, embedder=EMBEDDER) as amem,
            ):
                ads = amem.dataset(DATASET, create=False)
                start: dict[str, float] = {}
                began = 0.0
                for n in range(warmup + rounds * len(qs)):
                    if n == warmup:
                        # An idle server spends CPU too (uvicorn's loop ticks every 0.1 s): its
                        # rate, measured here, is taken off the time each server waited.
                        before = {k: _cpu_ms(pid) for k, pid in pids.items()}
                        await anyio.sleep(IDLE_SAMPLE_S)
                        start = {k: _cpu_ms(pid) for k, pid in pids.items()}
                        idle_rate.update(
                            (k, (start[k] - before[k]) / (IDLE_SAMPLE_S * 1000)) for k in pids
                        )
                        began = time.perf_counter()
                    q = qs[n % len(qs)]
                    payload = {"query": q, **body}
                    out: dict[str, Any] = {}
                    wall: dict[str, float] = {}
                    cpu: dict[str, float] = {}
                    for door in DOORS:
                        c, t = time.process_time(), time.perf_counter()
                        if door == "dataset_api":
                            out[door] = ds.search(q, **body)  # type: ignore[arg-type]
                        elif door == "async_api":
                            out[door] = await ads.search(q, **body)  # type: ignore[arg-type]
                        elif door == "service":
                            out[door] = service.search(DATASET, q, **body)  # type: ignore[arg-type]
                        elif door == "http":
                            r = http.post(path, json=payload)
                            out[door] = (r.status_code, r.content, r.headers.get("server-timing"))
                        elif door == "http_stdlib":
                            out[door] = std.post(path, payload)
                        else:
                            out[door] = await mcp.call_tool(
                                "search", {"dataset": DATASET, **payload}
                            )
                        wall[door], cpu[door] = _ms(t), (time.process_time() - c) * 1000
                    ids = [[str(r.episode_id) for r in out[k].results] for k in DOORS[:2]]
                    ids.append([r["episode_id"] for r in out["service"]["results"]])
                    for k in ("http", "http_stdlib"):
                        status, content, timing = out[k]
                        assert status == 200, content[:300]
                        ids.append([r["episode_id"] for r in json.loads(content)["results"]])
                        if n >= warmup:
                            spent = _server_timing(timing)
                            inside[k].append(wall[k] - spent["app"])
                            inside_cpu[k] += spent["cpu"]
                    tool = out["mcp_http"].structured_content or {}
                    ids.append([r["episode_id"] for r in tool.get("results", [])])
                    mismatches += any(x != ids[0] for x in ids[1:])
                    if n >= warmup:
                        for k in DOORS:
                            times[k].append(wall[k])
                            client_cpu[k] += cpu[k]
                elapsed = _ms(began)
                for k, pid in pids.items():
                    idle = elapsed - sum(times[k])  # while the other doors ran
                    server_cpu[k] = _cpu_ms(pid) - start[k] - idle_rate[k] * idle
            http.close()

        anyio.run(run)
    n = len(times["service"])
    base = np.asarray(times["service"])
    p50 = {k: common.percentiles(v)["p50"] for k, v in times.items()}
    per = lambda v: round(v / n, 3)  # noqa: E731
    return {
        "latency_ms": {k: common.percentiles(v) for k, v in times.items()},
        "cpu_ms_per_search": {k: per(client_cpu[k] + server_cpu.get(k, 0.0)) for k in DOORS},
        "client_cpu_ms_per_search": {k: per(client_cpu[k]) for k in DOORS},
        "server_cpu_ms_per_search": {k: per(v) for k, v in server_cpu.items()},
        "p50_ratio_to_service": {k: round(p50[k] / p50["service"], 3) for k in times},
        "overhead_vs_service_ms": {
            k: {
                "p50_difference": round(p50[k] - p50["service"], 3),
                "median_paired": round(float(np.median(np.asarray(times[k]) - base)), 3),
            }
            for k in SERVED
        },
        # wall - Server-Timing app: what a request waited beyond the server's search, itself.
        "round_trip_outside_search_ms": {k: common.percentiles(v) for k, v in inside.items()},
        # CPU of the HTTP layer alone: client + server process - the search's own thread CPU.
        "http_layer_cpu_ms_per_search": {
            k: per(client_cpu[k] + server_cpu[k] - inside_cpu[k]) for k in inside
        },
        "server_idle_cpu_ms_per_s": {k: round(v * 1000, 3) for k, v in idle_rate.items()},
        "searches_per_door": n,
        "result_mismatches": mismatches,
    }


def markdown(data: dict[str, Any]) -> str:
    lat = data["latency_ms"]
    over = data["overhead_vs_service_ms"]
    names = {
        "dataset_api": "in-process, `Dataset.search`",
        "async_api": "in-process, `await AsyncDataset.search` (async engine, CPU pool)",
        "service": "in-process, `Service.search` (dataset lookup + JSON)",
        "http": "HTTP, `POST /v1/datasets/{name}/search` (httpx, keep-alive)",
        "http_stdlib": "HTTP, the same route (stdlib `http.client`, keep-alive)",
        "mcp_http": "MCP over streamable HTTP, `search` tool (SDK client)",
    }
    cpu = data["cpu_ms_per_search"]
    ratio = data["p50_ratio_to_service"]
    rows = [[names[k], v["p50"], ratio[k], v["p95"], v["mean"], cpu[k]] for k, v in lat.items()]
    target = data["target_http_overhead_p50_ms"]
    outside = data["round_trip_outside_search_ms"]
    layer = data["http_layer_cpu_ms_per_search"]

    def verdict(ms: float) -> str:
        return f"**{'met' if ms <= target else 'missed'}** ({ms} ms)"

    return "\n".join(
        [
            "# Front-door overhead: in-process vs HTTP vs MCP",
            "",
            common.stamp_markdown(data["stamp"]),
            "",
            f"A generated store ({data['store']['documents']} notes, "
            f"{data['store']['episodes']} episodes, {data['store']['embeddings']} embedding rows), "
            f"{data['queries']} queries x {data['rounds']} rounds, each query through every door "
            f"in turn; `display=highly_related`, `top_k=10`. All doors use the **hash embedder**, "
            "so query embedding costs microseconds and the differences are the doors' own "
            "overhead; with the local model every door adds the same ~10-20 ms of embedding.",
            "",
            f"Load average (1, 5, 15 min) at the start: {data.get('load_before')}, at the end: "
            f"{data.get('load_after')}. The machine has 2 cores, shared with other work.",
            "",
            common.md_table(
                ["door", "p50 ms", "p50 / Service p50", "p95 ms", "mean ms", "CPU ms per search"],
                rows,
            ),
            "",
            "**HTTP overhead** (target <= "
            f"{target} ms p50), three ways, the first two per request and so immune to the "
            "search's own variation:",
            "",
            common.md_table(
                [
                    "HTTP door",
                    "wall - server's search time, p50 ms",
                    "p95 ms",
                    "HTTP-layer CPU ms (client + server)",
                    "median paired - Service.search ms",
                    "p50 difference ms",
                ],
                [
                    [
                        names[k].split(", ", 1)[1],
                        outside[k]["p50"],
                        outside[k]["p95"],
                        layer[k],
                        over[k]["median_paired"],
                        over[k]["p50_difference"],
                    ]
                    for k in ("http", "http_stdlib")
                ],
            ),
            "",
            f"- httpx: round trip outside the search {verdict(outside['http']['p50'])}; "
            f"paired against the in-process `Service.search` {verdict(over['http']['median_paired'])}.",
            f"- stdlib client: round trip outside the search "
            f"{verdict(outside['http_stdlib']['p50'])}; paired "
            f"{verdict(over['http_stdlib']['median_paired'])}.",
            f"- MCP over HTTP: paired {over['mcp_http']['median_paired']} ms, "
            f"{round(cpu['mcp_http'] - cpu['service'], 3)} ms more CPU than `Service.search` "
            "(no target).",
            "",
            "*Wall - server's search time*: the client's wall time minus the `Server-Timing: app` "
            "the server reports for the same request (dataset lookup, search, serialisation): "
            "the loopback round trip, HTTP parsing, routing, validation and the hand-over to a "
            "worker thread and back. *HTTP-layer CPU*: this process's CPU for the call plus the "
            "server process's CPU over the run, minus the search thread's own CPU "
            "(`Server-Timing: cpu`) and minus what the server spends idle (measured for "
            f"{IDLE_SAMPLE_S:g} s before the run: {data['server_idle_cpu_ms_per_s']} CPU ms per "
            "second, uvicorn's loop ticking) over the time it waited while the other doors ran, "
            "per search. *Paired*: the median over queries of "
            "(door - `Service.search`) on the same query in the same round. Wall times on a "
            "loaded machine also count the waits for a CPU at every hand-over; CPU times do not.",
            "",
            f"Results differing between doors: {data['result_mismatches']} of "
            f"{data['searches_per_door']} searches. Each server is one uvicorn process on "
            "127.0.0.1 (the two HTTP doors each have their own), on the same machine as the "
            "client and PostgreSQL; the MCP server answers tool calls with plain JSON "
            "(`json_response`), its session kept open for the whole run.",
            *[f"\n{note}" for note in data.get("notes", [])],
        ]
    )


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description="memflow front-door overhead benchmark")
    ap.add_argument("--database-url", help="server to create a scratch database on")
    ap.add_argument(
        "--home", type=Path, help="embedded server home (default ~/.cache/memflow-bench)"
    )
    ap.add_argument("--quick", action="store_true", help="tiny smoke run (the test suite uses it)")
    ap.add_argument("--out", type=Path, default=common.DEFAULT_OUT)
    ap.add_argument("--documents", type=int, default=60)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--note", action="append", default=[], help="a note for the Markdown")
    ap.add_argument("--render-only", action="store_true", help="rewrite doors.md from doors.json")
    args = ap.parse_args(argv)
    if args.render_only:
        return common.render_only(args.out, "doors", args.note, markdown)
    docs, nq, rounds = (4, 5, 1) if args.quick else (args.documents, args.queries, args.rounds)
    rng = np.random.default_rng(16)
    settings = {"quick": args.quick, "documents": docs, "queries": nq, "rounds": rounds,
                "embedder": EMBEDDER}  # fmt: skip
    from memflow.memory import Memory

    admin = common.server_url(args.database_url, args.home)
    with common.scratch_database(admin, "mfbench_doors") as url:
        with Memory.open(url, embedder=EMBEDDER) as mem:
            ds = mem.dataset(DATASET)
            for text in notes(rng, docs):
                ds.memorize(text.encode(), content_type="markdown", extractor="rules")
            store = ds.stats()
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        load_before = [round(x, 2) for x in os.getloadavg()]
        result = measure(url, queries(rng, nq), rounds, warmup=min(10, nq))
        load_after = [round(x, 2) for x in os.getloadavg()]
    data = {
        "stamp": common.stamp(settings),
        "store": store,
        "queries": nq,
        "rounds": rounds,
        "target_http_overhead_p50_ms": 5.0,
        "load_before": load_before,
        "load_after": load_after,
        **result,
        "notes": args.note,
    }
    common.write_json(args.out / "doors.json", data)
    common.write_text(args.out / "doors.md", markdown(data))
    return data


if __name__ == "__main__":
    main()
