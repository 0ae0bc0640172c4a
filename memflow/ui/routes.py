"""The pages of ``memflow ui``: server-rendered HTML (Jinja2, every value escaped) under /ui,
read-only, mounted into the ``memflow serve`` app (:func:`memflow.http_api.create_app`).

Every page answers with a strict Content-Security-Policy: scripts and styles only from
/ui/static (no inline script, no inline event handler), nothing framed, forms only to this
server. The dataset travels as a query parameter (``?d=NAME``), so any dataset name works.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from memflow.errors import InvalidInput, MemflowError
from memflow.http_api import status_of
from memflow.memory import Dataset, Memory
from memflow.service import Limits
from memflow.ui.access import COOKIE, Access, Refused, SignInNeeded, Viewer, same_origin
from memflow.ui.views import DatasetViews, Page, Params

PREFIX = "/ui"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin: the browser names this page in Origin when it posts a form here (with
    # no-referrer it sends "Origin: null"); other sites never see where a link came from
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",  # pages hold what memory holds
}
STATIC = {
    "ui.css": "text/css; charset=utf-8",
    "ui.js": "text/javascript; charset=utf-8",
    "icon.svg": "image/svg+xml",
}

Build = Callable[[Viewer], Page]


def _when(value: datetime | str | None) -> str:
    """A time as ``2024-03-12 14:05 UTC``, or its date alone at midnight UTC."""
    if not value:
        return ""
    if isinstance(value, str):  # a time inside JSON (a citation's)
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return str(value)
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    if (value.hour, value.minute, value.second) == (0, 0, 0):
        return value.date().isoformat()
    return value.strftime("%Y-%m-%d %H:%M") + (" UTC" if value.tzinfo else "")


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("memflow.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["cost"] = lambda v: "" if v is None else f"{v:.3f}"
    env.filters["signed"] = lambda v: f"{v:+.3f}".replace("-", "−")
    env.filters["short"] = lambda v: str(v)[:8]
    env.globals["link"] = _link
    return env


def _link(page: str, **params: Any) -> str:
    """The URL of a page with its query parameters (None ones left out), all quoted."""
    query = urlencode({k: str(v) for k, v in params.items() if v is not None})
    return f"{PREFIX}/{page}" + (f"?{query}" if query else "")


def _static(name: str) -> bytes:
    return resources.files("memflow.ui").joinpath("static", name).read_bytes()


def ui_router(memory: Memory, access: Access, *, limits: Limits | None = None) -> APIRouter:
    """The /ui pages over ``memory``, for the viewers ``access`` lets in."""
    env = _environment()
    static = {name: _static(name) for name in STATIC}
    router = APIRouter(prefix=PREFIX, include_in_schema=False)

    def html(
        request: Request,
        template: str,
        context: dict[str, Any],
        status: int = 200,
        viewer: Viewer | None = None,
    ) -> HTMLResponse:
        body = env.get_template(template).render(
            viewer=viewer,
            signed_in=viewer is not None and viewer.session is not None,
            path=request.url.path,
            **context,
        )
        return HTMLResponse(body, status_code=status, headers=HEADERS)

    def error(
        request: Request, status: int, title: str, message: str, viewer: Viewer | None = None
    ) -> HTMLResponse:
        return html(request, "error.html", {"title": title, "message": message}, status, viewer)

    def respond(request: Request, build: Build) -> Response:
        """The page ``build`` makes for whoever sends ``request``: sign-in first, 403 for a
        dataset their key may not use, memflow's errors as pages with their status."""
        auth = request.headers.get("authorization")
        try:
            viewer = access.viewer(auth, request.cookies.get(COOKIE))
        except SignInNeeded as exc:
            if auth:
                return error(request, 401, "Unauthorized", str(exc))
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(_link("login", next=target), status_code=303, headers=HEADERS)
        try:
            template, context = build(viewer)
        except Refused as exc:
            return error(request, 403, "Forbidden", str(exc), viewer)
        except MemflowError as exc:
            return error(request, status_of(exc), type(exc).__name__, str(exc), viewer)
        return html(request, template, context, 200, viewer)

    def dataset(viewer: Viewer, name: str | None) -> Dataset:
        if not name:
            raise InvalidInput("which dataset? add ?d=NAME to the address")
        viewer.check(name)
        return memory.dataset(name, create=False)

    @router.get("", include_in_schema=False)
    def root() -> Response:
        return RedirectResponse(f"{PREFIX}/", status_code=307, headers=HEADERS)

    @router.get("/")
    def datasets(request: Request) -> Response:
        def build(viewer: Viewer) -> Page:
            rows = [d for d in memory.datasets() if viewer.may_see(d.name)]
            return "datasets.html", {"datasets": rows}

        return respond(request, build)

    def page(path: str, view: Callable[[Dataset, Params], Page]) -> None:
        def handler(request: Request) -> Response:
            params = request.query_params
            return respond(request, lambda viewer: view(dataset(viewer, params.get("d")), params))

        router.add_api_route(f"/{path}", handler, methods=["GET"], name=f"ui_{path}")

    for path, view in DatasetViews(limits).views().items():
        page(path, view)

    @router.get("/login")
    def login_form(request: Request, next: str = "") -> Response:
        if access.open:
            return RedirectResponse(f"{PREFIX}/", status_code=303, headers=HEADERS)
        return html(request, "login.html", {"next": _safe_next(next), "error": None})

    @router.post("/login")
    async def login(request: Request) -> Response:
        if not same_origin(request.headers.get("origin"), request.headers.get("host")):
            return error(request, 403, "Forbidden", "sign in from this server's own page")
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        target = _safe_next((form.get("next") or [""])[0])
        try:
            token = access.sign_in((form.get("key") or [""])[0])
        except SignInNeeded as exc:
            return html(request, "login.html", {"next": target, "error": str(exc)}, 401)
        resp = RedirectResponse(target, status_code=303, headers=HEADERS)
        resp.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="strict",
            path=PREFIX,
            secure=request.url.scheme == "https",
        )
        return resp

    @router.post("/logout")
    def logout(request: Request) -> Response:
        if not same_origin(request.headers.get("origin"), request.headers.get("host")):
            return error(request, 403, "Forbidden", "sign out from this server's own page")
        access.sign_out(request.cookies.get(COOKIE))
        resp = RedirectResponse(_link("login"), status_code=303, headers=HEADERS)
        resp.delete_cookie(COOKIE, path=PREFIX)
        return resp

    @router.get("/static/{name}")
    def static_file(name: str) -> Response:
        if name not in static:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(
            static[name], media_type=STATIC[name], headers={**HEADERS, "Cache-Control": "no-cache"}
        )

    return router


def _safe_next(target: str) -> str:
    """Where to go after signing in: a page of /ui only (never another site)."""
    if target.startswith(f"{PREFIX}/") and not target.startswith("//") and "\\" not in target:
        return target
    return f"{PREFIX}/"


__all__ = ["CSP", "PREFIX", "ui_router"]
