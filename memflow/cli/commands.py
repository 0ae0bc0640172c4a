"""Subcommands of ``memflow`` (store, datasets, structured memory). Each registers itself."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from memflow.bounds import escape_unsafe, load_json
from memflow.cli.base import command, counts_text, emit, open_memory, plural
from memflow.cli.filters import add_metadata_option, add_scope_option, json_object, scope_of
from memflow.errors import InvalidInput, NotFound

CommonAdder = Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: CommonAdder) -> None:
    p = sub.add_parser(
        "init", help="create or upgrade the store (starts the embedded server if needed)"
    )
    common(p, dataset=False)
    p.set_defaults(handler="init")

    db = sub.add_parser(
        "db", help="database: upgrade, current, url, psql, start, stop, grant-reader"
    )
    dbsub = db.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    for name, text in (
        ("upgrade", "apply Alembic migrations up to head (== alembic upgrade head)"),
        (
            "current",
            "print the schema revision of the database and the head of this memflow; "
            "exits 1 when the schema is behind",
        ),
        ("url", 'print the database URL (psql "$(memflow db url)" works)'),
        (
            "psql",
            "open the psql shipped with the embedded server on this store; other arguments "
            'go to psql (memflow db psql -c "select 1")',
        ),
        ("start", "start the embedded server"),
        ("stop", "stop the embedded server"),
    ):
        dp = dbsub.add_parser(name, help=text, description=text)
        common(dp, dataset=False)
        if name == "upgrade":
            dp.add_argument(
                "--embedding-dim",
                type=int,
                default=None,
                help="dimension for a new store (default: the embedder's)",
            )
        dp.set_defaults(handler=f"db_{name}")

    text = (
        "let a PostgreSQL role read one dataset in psql (after SELECT memflow.use_dataset('NAME')); "
        "repeat for more datasets"
    )
    dp = dbsub.add_parser("grant-reader", help=text, description=text)
    common(dp)
    dp.add_argument("role", help="an existing PostgreSQL role (CREATE ROLE ... LOGIN)")
    dp.set_defaults(handler="db_grant_reader")

    p = sub.add_parser("datasets", help="list datasets with their episode and document counts")
    common(p, dataset=False)
    p.add_argument(
        "--drop",
        metavar="NAME",
        default=None,
        help="delete dataset NAME and everything in it (asks first; --yes when not on a terminal)",
    )
    p.add_argument("--yes", "-y", action="store_true", help="drop without asking")
    p.set_defaults(handler="datasets")

    p = sub.add_parser(
        "add-episode", help="store structured episode drafts from a JSON file (one draft or a list)"
    )
    common(p)
    p.add_argument("file", help="JSON file ('-' for stdin)")
    add_scope_option(p)
    add_metadata_option(p)
    p.set_defaults(handler="add_episode")

    p = sub.add_parser(
        "import",
        help="bulk-import episode drafts: each JSON file is one document; one transaction, "
        "indexes rebuilt at the end (for initial loads; other sessions wait until it commits)",
    )
    common(p)
    p.add_argument("files", nargs="+", help="JSON files, each one draft or a list of drafts")
    add_scope_option(p)
    add_metadata_option(p)
    p.set_defaults(handler="import_episodes")

    p = sub.add_parser(
        "stats", help="counts of episodes, facets, facet_points, entities, edges, documents"
    )
    common(p)
    p.set_defaults(handler="stats")

    p = sub.add_parser("show", help="print an episode as a tree with its edge texts")
    common(p)
    p.add_argument("episode_id", nargs="?", help="episode id (omit to list the dataset's episodes)")
    p.add_argument(
        "--document", metavar="ID", help="with --key: print a cited message or section instead"
    )
    p.add_argument("--key", help="the chunk key of a search citation (with --document)")
    p.set_defaults(handler="show")


def _server(args: argparse.Namespace) -> Any:
    from memflow import config as mfconfig
    from memflow.db.embedded import EmbeddedServer
    from memflow.errors import ConfigurationError

    if mfconfig.database_url(args.database_url):
        raise ConfigurationError(
            "this command controls the embedded server; unset --database-url / MEMFLOW_DATABASE_URL"
        )
    return EmbeddedServer(mfconfig.memflow_home(args.home))


@command("init")
def _init(args: argparse.Namespace) -> None:
    from memflow import config as mfconfig

    with open_memory(args, auto_upgrade=True) as mem:
        url = mfconfig.libpq_url(mem.url)
        emit(
            args,
            {"url": url, "embedder": mem.embedder.name, "dim": mem.embedder.dim},
            f"memflow store ready at {url}\nembedder: {mem.embedder.name} ({mem.embedder.dim} dims)",
        )


@command("db_upgrade")
def _db_upgrade(args: argparse.Namespace) -> None:
    from memflow.db import engine as dbe
    from memflow.db import migrate

    url = migrate.resolve_url(args.database_url)
    dim = args.embedding_dim
    if dim is None:
        from memflow.embed.factory import make_embedder

        dim = make_embedder(args.embedder).dim
    eng = dbe.make_engine(url)
    try:
        with dbe.transaction(eng) as conn:
            dbe.check_server(conn)
            steps = migrate.upgrade(conn, embedding_dim=dim, announce=True)
            rev = migrate.current_revision(conn)
    finally:
        eng.dispose()
    applied = [{"from": s.frm, "to": s.to, "title": s.title} for s in steps]
    done = "" if steps else " (already up to date)"
    emit(args, {"revision": rev, "applied": applied}, f"memflow schema at revision {rev}{done}")


@command("db_current")
def _db_current(args: argparse.Namespace) -> int:
    from memflow.db import engine as dbe
    from memflow.db import migrate

    eng = dbe.make_engine(migrate.resolve_url(args.database_url))
    try:
        with dbe.transaction(eng) as conn:
            rev = migrate.current_revision(conn)
    finally:
        eng.dispose()
    head = migrate.head_revision()
    emit(
        args,
        {"current": rev, "head": head, "up_to_date": rev == head},
        f"current: {rev or 'none'}  head: {head}{'' if rev == head else '  (run `memflow db upgrade`)'}",
    )
    return 0 if rev == head else 1


@command("db_grant_reader")
def _db_grant_reader(args: argparse.Namespace) -> None:
    from memflow.db import engine as dbe
    from memflow.db import migrate
    from memflow.db.queries import q

    eng = dbe.make_engine(migrate.resolve_url(args.database_url))
    try:
        with dbe.transaction(eng) as conn:
            dbe.check_schema_current(conn)
            conn.execute(q("grant_reader"), {"dataset": args.dataset, "role": args.role})
    finally:
        eng.dispose()
    emit(
        args,
        {"role": args.role, "dataset": args.dataset},
        f"{args.role} may read dataset {args.dataset}: in psql, run "
        f"SELECT memflow.use_dataset('{args.dataset}');",
    )


@command("db_url")
def _db_url(args: argparse.Namespace) -> None:
    from memflow import config as mfconfig
    from memflow.db import migrate

    url = mfconfig.libpq_url(migrate.resolve_url(args.database_url))
    emit(args, {"url": url}, url)


@command("db_psql")
def _db_psql(args: argparse.Namespace) -> int:
    import shutil

    from memflow import config as mfconfig
    from memflow.db import migrate
    from memflow.db.embedded import bin_dir

    url = mfconfig.libpq_url(migrate.resolve_url(args.database_url))
    psql = str(bin_dir() / "psql") if (bin_dir() / "psql").exists() else shutil.which("psql")
    if psql is None:
        raise InvalidInput("no psql found: install the PostgreSQL client")
    sys.stdout.flush()
    os.execv(psql, [psql, url, *args.passthrough])
    return 0  # pragma: no cover


@command("db_start")
def _db_start(args: argparse.Namespace) -> None:
    from memflow import config as mfconfig

    server = _server(args)
    server.start()
    emit(
        args,
        {"running": True, "url": mfconfig.libpq_url(server.url()), "pgdata": str(server.pgdata)},
        f"embedded server running: {mfconfig.libpq_url(server.url())}",
    )


@command("db_stop")
def _db_stop(args: argparse.Namespace) -> None:
    stopped = _server(args).stop()
    emit(
        args,
        {"stopped": stopped},
        "embedded server stopped" if stopped else "embedded server was not running",
    )


def _confirm_drop(args: argparse.Namespace, stats: dict[str, int]) -> None:
    """Ask on a terminal; elsewhere only --yes drops."""
    if args.yes:
        return
    what = f"{plural(stats['episodes'], 'episode')} and {plural(stats['documents'], 'document')}"
    if not sys.stdin.isatty():
        raise InvalidInput(f"dropping {args.drop!r} deletes {what}: add --yes to confirm")
    answer = input(f"drop dataset {args.drop!r} with {what}? [y/N] ")
    if answer.strip().lower() not in {"y", "yes"}:
        raise InvalidInput("not dropped")


@command("datasets")
def _datasets(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        if args.drop:
            _confirm_drop(args, mem.dataset(args.drop, create=False).stats())
            if not mem.drop_dataset(args.drop):
                raise NotFound(f"no dataset named {args.drop!r}: list them with `memflow datasets`")
            emit(args, {"dropped": args.drop}, f"dropped {args.drop}")
            return
        rows = mem.datasets()
    from memflow.service import dataset_json

    payload = [dataset_json(d) for d in rows]
    lines = [  # a name stored before the rules for names may hold a tab or a newline
        f"{escape_unsafe(d.name)}\t{plural(d.episodes, 'episode')}"
        f"\t{plural(d.documents, 'document')}"
        f"\t{d.embedder or '-'}"
        for d in rows
    ] or ["(no datasets)"]
    emit(args, {"datasets": payload}, "\n".join(lines))


def _read_json(path: str) -> Any:
    try:
        raw = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return load_json(
        raw, path, malformed="{what}: invalid JSON at line {line} column {column}: {msg}"
    )


@command("add_episode")
def _add_episode(args: argparse.Namespace) -> None:
    data = _read_json(args.file)
    drafts = data if isinstance(data, list) else [data]
    with open_memory(args) as mem:
        ds = mem.dataset(args.dataset)
        res = ds.add_episodes(
            drafts,
            scope=scope_of(args.scope),
            metadata=json_object(args.metadata, "--metadata"),
        )
    payload = {
        "document_id": str(res.document_id),
        "status": res.status,
        "episode_ids": [str(e) for e in res.episode_ids],
        **res.counts,
        "embeddings": res.embeddings,
    }
    if res.status == "skipped":
        text = f"already stored (document {res.document_id}); nothing written"
    else:
        text = (
            f"stored {counts_text(res.counts)} ({plural(res.embeddings, 'new embedding')})\n"
            + "\n".join(f"  episode {e}" for e in res.episode_ids)
        )
    emit(args, payload, text)


@command("import_episodes")
def _import_episodes(args: argparse.Namespace) -> None:
    documents = []
    for path in args.files:
        data = _read_json(path)
        documents.append(data if isinstance(data, list) else [data])

    def progress(done: int, total: int) -> None:
        if not args.json and sys.stderr.isatty():
            sys.stderr.write(f"\rwritten {done}/{total} documents; building indexes when done")
            sys.stderr.write("\n" if done >= total else "")
            sys.stderr.flush()

    with open_memory(args) as mem:
        results = mem.dataset(args.dataset).import_episodes(
            documents,
            progress=progress,
            scope=scope_of(args.scope),
            metadata=json_object(args.metadata, "--metadata"),
        )
    payload = [
        {
            "file": path,
            "document_id": str(r.document_id),
            "status": r.status,
            **r.counts,
            "embeddings": r.embeddings,
        }
        for path, r in zip(args.files, results, strict=True)
    ]
    written = [r for r in results if r.status == "written"]
    nodes = sum(
        r.counts[k] for r in written for k in ("episodes", "facets", "facet_points", "entities")
    )
    seconds = results[0].seconds if results else 0.0
    text = "\n".join(f"{p['status']:8} {p['file']}" for p in payload) + (
        f"\n{len(written)} written, {len(results) - len(written)} skipped; {nodes} nodes in "
        f"{seconds:.1f} s ({nodes / max(seconds, 1e-9):.0f} nodes/s, index rebuild included)"
    )
    emit(args, payload, text)


@command("stats")
def _stats(args: argparse.Namespace) -> None:
    with open_memory(args) as mem:
        stats = mem.dataset(args.dataset, create=False).stats()
    from memflow.service import stats_json

    emit(args, stats_json(args.dataset, stats), "\n".join(f"{k:13} {v}" for k, v in stats.items()))


@command("show")
def _show(args: argparse.Namespace) -> None:
    if bool(args.document) != bool(args.key):
        raise InvalidInput("pass --document and --key together (from a search's citations)")
    with open_memory(args) as mem:
        ds = mem.dataset(args.dataset, create=False)
        if args.document:
            chunk = ds.chunk(args.document, args.key)
            when = f" ({chunk['ts'].isoformat()})" if chunk["ts"] else ""
            who = f"{chunk['speaker']}: " if chunk["speaker"] else ""
            head = f"{chunk['source']} {chunk['key']}{when}"
            emit(args, {"chunk": chunk}, f"{head}\n{who}{chunk['text']}")
            return
        if not args.episode_id:
            eps = ds.episodes()
            emit(
                args,
                {"episodes": eps},
                "\n".join(f"{e['id']}  {e['name']}" for e in eps) or "(no episodes)",
            )
            return
        rows = ds.episode_tree(args.episode_id)
    lines = []
    for r in rows:
        lines.append(r["tree"])
        if r["edge_text"]:
            lines.append(" " * (4 * r["depth"] + 3) + f"edge: {r['edge_text']}")
    emit(args, {"episode_id": args.episode_id, "rows": rows}, "\n".join(lines))
