"""``memflow mcp`` and ``memflow serve``: the front doors agents use, on memflow.service."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Any

from memflow.cli.base import command, open_memory
from memflow.errors import ConfigurationError

SERVER_EXTRA = "pip install 'memflow[server]'"
DEFAULT_STATEMENT_TIMEOUT = 30.0
KEEP_ALIVE_S = 75  # idle seconds before the server closes a keep-alive connection (as nginx)
# A JSON body may escape the text it carries (\uXXXX): allow twice the document cap plus room
# for the other fields; the text itself is then held to MEMFLOW_MAX_DOCUMENT_BYTES.
_BODY_SLACK = 64 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve memflow to agents over the Model Context Protocol (stdio or HTTP)",
        description="Tools memorize, search, forget, list_datasets, stats, get_episode and the "
        "resource memflow://{dataset}/episodes/{id}. Needs " + SERVER_EXTRA + ".",
    )
    common(p, dataset=False)
    p.add_argument(
        "--dataset",
        "-d",
        default=None,
        help="fix the dataset: tools take no dataset argument and cannot reach another "
        "(default: every tool takes a dataset argument)",
    )
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    _listen(p, 8765)
    p.add_argument(
        "--allow-read",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory whose files memorize may read by path (repeatable; default: none, "
        "text only)",
    )
    p.set_defaults(handler="mcp")

    p = sub.add_parser(
        "serve",
        help="serve memflow as an HTTP JSON API (OpenAPI at /openapi.json)",
        description='Routes under /v1/datasets/{name}/...; MEMFLOW_API_KEYS=\'{"<key>": '
        '["dataset", ...] or ["*"]}\' enables Bearer-key auth (without keys it binds only '
        "127.0.0.1). Needs " + SERVER_EXTRA + ".",
    )
    common(p, dataset=False)
    _listen(p, 8080)
    _allow_host(p)
    p.set_defaults(handler="serve")

    p = sub.add_parser(
        "ui",
        help="memflow serve with a read-only web view at /ui (datasets, episode trees, searches "
        "with their evidence chains, statement histories)",
        description="The app of `memflow serve` (the same routes, keys and per-dataset 403s) "
        "with web pages under /ui: open http://127.0.0.1:8080/ui/. With MEMFLOW_API_KEYS the "
        "browser signs in with a key and sees that key's datasets; without keys it binds only "
        "127.0.0.1. Needs " + SERVER_EXTRA + ". docs/ui.md.",
    )
    common(p, dataset=False)
    _listen(p, 8080)
    _allow_host(p)
    p.set_defaults(handler="serve", ui=True)


def _allow_host(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="without API keys the server answers only requests addressed to 127.0.0.1, "
        "localhost, ::1 or --host (Host and Origin headers; this stops DNS rebinding from web "
        "pages): also answer requests for NAME (repeatable)",
    )


def _listen(p: argparse.ArgumentParser, port: int) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (HTTP)")
    p.add_argument("--port", type=int, default=port, help=f"port to listen on (default {port})")
    p.add_argument(
        "--statement-timeout",
        type=float,
        default=DEFAULT_STATEMENT_TIMEOUT,
        metavar="SECONDS",
        help=f"cancel database statements running longer (default {DEFAULT_STATEMENT_TIMEOUT:g})",
    )


def _require(command_name: str, *modules: str) -> None:
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ConfigurationError(
            f"memflow {command_name} needs {', '.join(missing)}, which are not installed: "
            f"{SERVER_EXTRA}"
        )


def _announce(args: argparse.Namespace, payload: dict[str, Any], text: str) -> None:
    if args.json:
        print(json.dumps(payload), flush=True)
    else:
        print(f"memflow {args.command}: {text}", file=sys.stderr, flush=True)


def _max_body() -> int:
    from memflow.ingest.pipeline import max_document_bytes

    return 2 * max_document_bytes() + _BODY_SLACK


def _uvicorn(app: Any, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # a log record per request costs CPU even when filtered out
        # An agent calls between model turns, seconds apart: keep its connection open rather
        # than pay a new one per call (uvicorn's default closes it after 5 s idle).
        timeout_keep_alive=KEEP_ALIVE_S,
        timeout_graceful_shutdown=10,
    )


@command("mcp")
def _mcp(args: argparse.Namespace) -> None:
    _require("mcp", "mcp", "uvicorn")
    from memflow.asgi import LOOPBACK_HOSTS

    if args.transport == "http" and args.host not in LOOPBACK_HOSTS:
        raise ConfigurationError(
            f"memflow mcp --transport http has no authentication and listens only on 127.0.0.1, "
            f"not {args.host!r}: expose memflow over the network with `memflow serve` and "
            "MEMFLOW_API_KEYS"
        )
    from memflow.mcp_server import build_server, streamable_http_app
    from memflow.service import Service, limit_statements

    with open_memory(args) as mem:
        for engine in mem.reads.engines():  # the primary and every read replica
            limit_statements(engine, args.statement_timeout)
        server = build_server(Service(mem, read_roots=args.allow_read), dataset=args.dataset)
        if args.transport == "stdio":
            server.run("stdio")
            return
        url = f"http://{args.host}:{args.port}/mcp"
        _announce(args, {"url": url, "dataset": args.dataset}, f"streamable HTTP at {url}")
        _uvicorn(
            streamable_http_app(server, host=args.host, max_body=_max_body()), args.host, args.port
        )


def _ui(mem: Any, keys: Any) -> list[Any]:
    """The routers of ``memflow ui`` (memflow.ui) over ``mem``, for the API ``keys``."""
    _require("ui", "jinja2")
    from memflow.ui import Access, ui_router

    return [ui_router(mem, Access(keys))]


@command("serve")
def _serve(args: argparse.Namespace) -> None:
    _require("serve", "fastapi", "uvicorn")
    from memflow.asgi import LOOPBACK_HOSTS, allowed_hosts
    from memflow.http_api import create_app, parse_api_keys
    from memflow.service import Service, limit_statements

    keys = parse_api_keys(os.environ.get("MEMFLOW_API_KEYS"))
    if not keys and args.host not in LOOPBACK_HOSTS:
        raise ConfigurationError(
            f"no API keys configured, so memflow serve binds only 127.0.0.1, not {args.host!r}: "
            'set MEMFLOW_API_KEYS=\'{"<a long random key>": ["*"]}\' to listen there'
        )
    with open_memory(args) as mem:
        for engine in mem.reads.engines():  # the primary and every read replica
            limit_statements(engine, args.statement_timeout)
        hosts = allowed_hosts(args.host, args.allow_host)
        routers = _ui(mem, keys) if getattr(args, "ui", False) else []
        app = create_app(
            Service(mem), keys=keys, max_body=_max_body(), hosts=hosts, routers=routers
        )
        url = f"http://{args.host}:{args.port}" + ("/ui/" if routers else "")
        auth = f"{len(keys)} API keys" if keys else "no API keys: open to every local process"
        _announce(args, {"url": url, "api_keys": len(keys)}, f"listening on {url} ({auth})")
        _uvicorn(app, args.host, args.port)


__all__ = ["register"]
