"""Who may see what in ``memflow ui``: the API keys of ``memflow serve`` (``MEMFLOW_API_KEYS``).

A script sends ``Authorization: Bearer <key>`` as it does to the JSON API. A browser signs in
once with the key and gets a session cookie (HttpOnly, SameSite=Strict, scoped to /ui): a random
token the server maps to the key's datasets, kept in memory only (a restart signs everyone out).
The key itself never goes back to the browser. Without keys (loopback only) everyone may see
every dataset and there is nothing to sign in to.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import urlsplit

KeyTable = dict[str, frozenset[str] | None]  # key -> datasets it may use (None: every dataset)
COOKIE = "memflow_ui"
SESSION_SECONDS = 12 * 3600  # a working day; then sign in again
MAX_SESSIONS = 1000  # the oldest session goes first beyond this many


class SignInNeeded(Exception):
    """The request carries no valid key or session: the page sends the browser to sign in."""


class Refused(Exception):
    """The key may not use what the request asks for (403), or the request is not the page's
    own (a form posted from another site)."""


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the datasets they may see (None: every dataset) and how they signed in
    (``session``: the cookie's token, None for a Bearer key or a server without keys)."""

    names: frozenset[str] | None
    session: str | None = None

    def may_see(self, dataset: str) -> bool:
        return self.names is None or dataset in self.names

    def check(self, dataset: str) -> None:
        if not self.may_see(dataset):
            raise Refused(f"this API key may not use the dataset {dataset!r}")


class Access:
    """The key table and the browser sessions signed in with its keys."""

    def __init__(self, keys: KeyTable, *, ttl: float = SESSION_SECONDS) -> None:
        self.keys = keys
        self.ttl = ttl
        self._sessions: OrderedDict[str, tuple[frozenset[str] | None, float]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        """No keys: every caller sees every dataset (the server listens on loopback only)."""
        return not self.keys

    def names_of_key(self, key: str) -> frozenset[str] | None:
        """The datasets ``key`` may use; SignInNeeded for a key the table does not hold."""
        for known, names in self.keys.items():
            if hmac.compare_digest(known.encode(), key.strip().encode()):
                return names
        raise SignInNeeded("unknown API key: check MEMFLOW_API_KEYS")

    def viewer(self, authorization: str | None, cookie: str | None) -> Viewer:
        """Who sends a request with these ``Authorization`` and session-cookie values."""
        if self.open:
            return Viewer(None)
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return Viewer(self.names_of_key(token))
        if cookie:
            with self._lock:
                found = self._sessions.get(cookie)
                if found is not None and found[1] > time.monotonic():
                    return Viewer(found[0], cookie)
                self._sessions.pop(cookie, None)
        raise SignInNeeded("sign in with an API key")

    def sign_in(self, key: str) -> str:
        """A new session for ``key`` (SignInNeeded if unknown): its cookie token."""
        names = self.names_of_key(key)
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[token] = (names, time.monotonic() + self.ttl)
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        return token

    def sign_out(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._sessions.pop(token, None)


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a form post comes from a page of this server: its ``Origin`` names the host the
    request was sent to (no ``Origin``: not a browser's cross-site post, which always has one)."""
    if origin is None:
        return True
    if not host:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


__all__ = [
    "COOKIE",
    "Access",
    "KeyTable",
    "Refused",
    "SignInNeeded",
    "Viewer",
    "same_origin",
]
