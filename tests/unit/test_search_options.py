"""A search's options are written once (``memflow.recall.options.SearchOptions``): the facades'
keywords are typed by a TypedDict kept equal to the model, the doors derive their schemas from it
(memflow.service.search_request), and the keywords are spelled out in few places (counted here by
``ast``, as issue 27 asks: at most five)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_type_hints

import pytest

import memflow
from memflow import InvalidInput, SearchOptions
from memflow.recall.options import MultiSearchKeywords, SearchKeywords, iso_time

PACKAGE = Path(memflow.__file__).resolve().parent
KEYWORDS = set(SearchOptions.model_fields)
MAX_SITES = 5


def keyword_sites(root: Path = PACKAGE) -> list[str]:
    """Every signature, call, class body and dict literal that names four or more of the search
    options: the places a new option would have to be written again."""
    sites = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: set[str] = set()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                names = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
            elif isinstance(node, ast.Call):
                names = {k.arg for k in node.keywords if k.arg}
                names |= {p.id for p in node.args if isinstance(p, ast.Name)}
            elif isinstance(node, ast.ClassDef):
                names = {
                    s.target.id
                    for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                }
            elif isinstance(node, ast.Dict):
                names = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            if len(names & KEYWORDS) >= 4:
                sites.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return sites


def test_the_search_keywords_are_spelled_out_in_at_most_five_places() -> None:
    sites = keyword_sites()
    assert len(sites) <= MAX_SITES, "\n".join(sites)


def test_the_counter_sees_a_signature_that_repeats_them(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def search(q, *, top_k=None, mode=None, display=None, as_of=None): ...\n"
        "search('x', top_k=1, mode='episodic', display='summary', where={})\n"
        "def other(q, *, top_k=None, mode=None): ...\n"
    )
    assert keyword_sites(tmp_path) == [f"{tmp_path.name}/m.py:1", f"{tmp_path.name}/m.py:2"]


def test_the_keywords_of_the_facades_are_the_options() -> None:
    one = get_type_hints(SearchKeywords)
    several = get_type_hints(MultiSearchKeywords)
    assert set(one) == KEYWORDS - {"datasets"}
    assert set(several) == KEYWORDS and MultiSearchKeywords.__required_keys__ == {"datasets"}


def test_bad_options_say_which_and_times_parse() -> None:
    with pytest.raises(InvalidInput, match="top_k"):
        SearchOptions.of(top_k=0)
    with pytest.raises(InvalidInput, match="mode"):
        SearchOptions.of(mode="magic")
    with pytest.raises(InvalidInput, match="topk"):
        SearchOptions.of(topk=3)
    with pytest.raises(InvalidInput, match="not an ISO 8601 time"):
        SearchOptions.of(as_of="someday")
    with pytest.raises(InvalidInput, match=r"datasets=\['garden'\]"):
        SearchOptions.of(datasets="garden")
    opts = SearchOptions.of(now="2024-05-08", as_of="2024-05-08T13:56:00Z")
    assert opts.now is not None and opts.now.tzinfo is None  # read in the config's timezone
    assert opts.as_of is not None and opts.as_of.utcoffset() is not None
    assert iso_time("2024-05-08", "t").isoformat() == "2024-05-08T00:00:00+00:00"  # type: ignore[union-attr]
    assert opts.keywords() == {"now": opts.now, "as_of": opts.as_of}
