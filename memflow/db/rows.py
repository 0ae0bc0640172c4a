"""Result rows read by column name, resolved once per result (not once per row).

``row.column`` on a SQLAlchemy ``Row`` costs ~3x an index lookup, which the search hot path
(~600 hits and ~1,300 projection rows per query) notices. :func:`columns` looks the names up in
the result's keys once and returns an ``itemgetter``: adding, removing or reordering a column of
a statement can never shift fields, and a missing column is an error that names it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from memflow.errors import DatabaseError

RowGetter = Callable[[Sequence[Any]], tuple[Any, ...]]


def column_index(keys: Sequence[str], name: str) -> int:
    """The position of column ``name`` among a result's ``keys``."""
    try:
        return list(keys).index(name)
    except ValueError:
        raise DatabaseError(
            f"the statement returned no column {name!r} (it has {', '.join(keys)}): "
            "the SQL in sql/ and the code reading it disagree; reinstall memflow"
        ) from None


def columns(keys: Sequence[str], *names: str) -> RowGetter:
    """A function returning the columns ``names`` of a row (as a tuple, in that order)."""
    idx = [column_index(keys, n) for n in names]
    if len(idx) == 1:
        only = idx[0]
        return lambda row: (row[only],)
    return itemgetter(*idx)


__all__ = ["RowGetter", "column_index", "columns"]
