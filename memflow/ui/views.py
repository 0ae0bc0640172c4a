"""The pages of one dataset in ``memflow ui``: each view reads through memflow's Dataset API
(and the reads of :mod:`memflow.store.reads` the web view adds) and returns its template and
the values it shows. No HTML and no HTTP here (memflow.ui.routes serves them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy import Connection

from memflow.errors import InvalidInput
from memflow.memory import Dataset
from memflow.recall.config import RecallConfig
from memflow.service import Limits
from memflow.store import reads
from memflow.store.reads import as_uuid
from memflow.text.tokens import token_counter
from memflow.ui.pages import document_versions, episode_tree, explain

EPISODES_SHOWN = 500  # on a dataset's page; the rest are reached by search
MAX_CITATIONS = 20  # per node of an episode's tree (a point cites one or a few chunks)

Page = tuple[str, dict[str, Any]]  # a template and what it shows
Params = Mapping[str, str]  # the query parameters of the request
T = TypeVar("T")


class DatasetViews:
    """The views of a dataset's pages, each ``view(ds, params) -> (template, values)``."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self.defaults = RecallConfig()  # the one source of search defaults

    def views(self) -> dict[str, Callable[[Dataset, Params], Page]]:
        """The views by the path of their page."""
        return {
            "dataset": self.dataset,
            "episode": self.episode,
            "search": self.search,
            "history": self.history,
            "chunk": self.chunk,
        }

    def dataset(self, ds: Dataset, params: Params) -> Page:
        """Counts, the search box, documents with their versions, episodes."""
        stats = ds.stats()
        return "dataset.html", {
            "name": ds.name,
            "stats": stats,
            "episodes": ds.episodes(EPISODES_SHOWN),
            "more_episodes": max(0, stats["episodes"] - EPISODES_SHOWN),
            "sources": document_versions(ds.documents()),
            "top_k": self.defaults.top_k,
            "budget": self.defaults.budget_tokens,
        }

    def episode(self, ds: Dataset, params: Params) -> Page:
        """An episode as a tree (``?id=``), with the documents that support it."""
        eid = as_uuid(params.get("id", ""), "episode")
        rows = _read(
            ds, lambda c: reads.episode_graph(c, ds.id, ds.name, eid, max_citations=MAX_CITATIONS)
        )
        docs = _read(ds, lambda c: reads.episode_documents(c, ds.id, eid))
        return "episode.html", {"name": ds.name, "tree": episode_tree(rows), "documents": docs}

    def search(self, ds: Dataset, params: Params) -> Page:
        """``?q=`` searched (``k`` results, a context of ``budget`` tokens): each result with
        its explain trace, and the packed context with the tokens it uses."""
        lim, query = self.limits, params.get("q", "")
        top_k = _number(params.get("k", ""), self.defaults.top_k, lim.max_top_k, "results")
        budget = _number(
            params.get("budget", ""), self.defaults.budget_tokens, lim.max_budget_tokens, "budget"
        )
        values: dict[str, Any] = {"name": ds.name, "query": query, "top_k": top_k}
        values.update(budget=budget, response=None)
        if not query.strip():
            return "search.html", values
        if len(query) > lim.max_query_chars:
            raise InvalidInput(
                f"the query is {len(query)} characters long: use at most {lim.max_query_chars}"
            )
        resp = ds.search(query, top_k=top_k, display="highly_related", budget_tokens=budget)
        values.update(
            response=resp,
            results=[(r, explain(r)) for r in resp.results],
            used=token_counter(resp.token_counter)(resp.context),
        )
        return "search.html", values

    def history(self, ds: Dataset, params: Params) -> Page:
        """Every version of the statement ``?id=``, with what closed each and why, its logged
        changes, and (the page only reads) how to reopen a closed one."""
        node = as_uuid(params.get("id", ""), "statement")
        entries = ds.history(node)
        return "history.html", {
            "name": ds.name,
            "node_id": node,
            "entries": entries,
            "texts": {e.node_id: e.text for e in entries},
        }

    def chunk(self, ds: Dataset, params: Params) -> Page:
        """The message ``?key=`` of document ``?doc=``: what a citation points at."""
        doc = as_uuid(params.get("doc", ""), "document")
        return "chunk.html", {"name": ds.name, "chunk": ds.chunk(doc, params.get("key", ""))}


def _read(ds: Dataset, fn: Callable[[Connection], T]) -> T:
    """``fn`` the way the Dataset API reads (a read it does not offer): one transaction bound to
    ``ds`` (row-level security keys on it), on the server the store reads from (a caught-up
    replica, else the primary)."""
    return ds._read(fn)


def _number(text: str, default: int, high: int, what: str) -> int:
    if not text.strip():
        return default
    value = int(text) if text.strip().isdigit() else 0
    if not 1 <= value <= high:
        raise InvalidInput(f"{what} must be a whole number from 1 to {high}, got {text!r}")
    return value


__all__ = ["EPISODES_SHOWN", "MAX_CITATIONS", "DatasetViews"]
