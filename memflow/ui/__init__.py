"""``memflow ui``: a read-only web view of a store, served by the ``memflow serve`` app.

Datasets with their counts and documents, an episode as an expandable tree (facets, points,
entities, edge texts, citations, validity), searches with each result's evidence chain and the
packed context, and a statement's history. Server-rendered (Jinja2), no build step; the pages
and their one script live in this package (``templates/``, ``static/``). docs/ui.md.
"""

from memflow.ui.access import Access
from memflow.ui.routes import ui_router

__all__ = ["Access", "ui_router"]
