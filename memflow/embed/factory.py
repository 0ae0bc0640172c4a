"""Build an embedder from a short spec string ("local", "hash:256", "openai:<model>", ...)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from memflow.embed.base import Embedder
from memflow.errors import ConfigurationError

DEFAULT_SPEC = "local"
CHOICES = (
    "local",
    "hash",
    "hash:<dim>",
    "openai",
    "openai:<model>",
    "sentence-transformers:<model path>",
)


def _choices() -> str:
    return ", ".join(repr(c) for c in CHOICES)


def _hash_dim(arg: str) -> int:
    if not arg:
        return 384
    try:
        dim = int(arg)
    except ValueError as exc:
        raise ConfigurationError(
            f"hash embedder dimension must be an integer, got {arg!r}"
        ) from exc
    if dim < 1:
        raise ConfigurationError(f"hash embedder dimension must be positive, got {dim}")
    return dim


def make_embedder(
    spec: str | Embedder | None = None, env: Mapping[str, str] | None = None
) -> Embedder:
    """An embedder for ``spec``; None reads MEMFLOW_EMBEDDER, else the local default.

    An object that already is an embedder is returned as is.
    """
    if spec is not None and not isinstance(spec, str):
        if isinstance(spec, Embedder):
            return spec
        raise ConfigurationError(
            f"not an embedder: {type(spec).__name__} (pass an Embedder or one of {_choices()})"
        )
    source = os.environ if env is None else env
    text = (spec if spec is not None else source.get("MEMFLOW_EMBEDDER", "")).strip()
    kind, _, arg = (text or DEFAULT_SPEC).partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    if kind == "local":
        if arg and arg != "multilingual-e5-small":
            raise ConfigurationError(
                f"the local embedder only offers multilingual-e5-small, not {arg!r}"
            )
        from memflow.embed.local import LocalEmbedder

        return LocalEmbedder()
    if kind == "hash":
        from memflow.embed.hash import HashEmbedder

        return HashEmbedder(dim=_hash_dim(arg))
    if kind == "openai":
        from memflow.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(model=arg or None, env=source)
    if kind in ("sentence-transformers", "sentence_transformers"):
        if not arg:
            raise ConfigurationError(
                "sentence-transformers needs a model path: 'sentence-transformers:/path/to/model'"
            )
        from memflow.embed.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(arg)
    raise ConfigurationError(f"unknown embedder {text!r}: choose one of {_choices()}")


def spec_for_name(name: str | None) -> str | None:
    """The spec that rebuilds the embedder a dataset records by name (``hash-256`` ->
    ``hash:256``); None when the name does not say how (a sentence-transformers path)."""
    if not name:
        return None
    if name.startswith("hash-"):
        return "hash:" + name[len("hash-") :]
    if name.split(":", 1)[0] in ("local", "openai"):
        return name
    return None


__all__ = ["CHOICES", "DEFAULT_SPEC", "make_embedder", "spec_for_name"]
