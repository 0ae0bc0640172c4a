"""Deterministic ids and name canonicalisation (architecture.md)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
import uuid

_NAMESPACE = uuid.UUID("6f1c9a52-4a57-4c1e-9a0b-6d656d666c6f")
_PUNCT = re.compile(r"[，,。.；;：:()（）\[\]【】<>《》\"'“”‘’!！？?]")
_WS = re.compile(r"\s+")


def canonical_name(name: str) -> str:
    """NFKC, casefold, punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _PUNCT.sub("", text)
    return _WS.sub(" ", text).strip()


def normalise_text(text: str) -> str:
    """Normalisation used for ids of texts: NFKC, casefold, whitespace collapsed."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def make_id(dataset_id: uuid.UUID, kind: str, *parts: str | uuid.UUID | None) -> uuid.UUID:
    """uuid5 over dataset, kind, and the given parts (parent id, normalised text)."""
    key = "\x1f".join([str(dataset_id), kind, *("" if p is None else str(p) for p in parts)])
    return uuid.uuid5(_NAMESPACE, key)


def text_hash(text: str) -> bytes:
    """Hash of a text as embedded (exact text, not normalised)."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def content_hash(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()
