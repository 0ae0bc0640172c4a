"""make_embedder: spec parsing, env fallback and clear errors (no model is loaded)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from memflow.embed.factory import make_embedder
from memflow.embed.hash import HashEmbedder
from memflow.embed.openai import OpenAIEmbedder
from memflow.errors import ConfigurationError


def test_hash_default_and_explicit_dimension() -> None:
    default = make_embedder("hash")
    assert isinstance(default, HashEmbedder)
    assert default.dim == 384
    small = make_embedder(" HASH:256 ")
    assert (small.name, small.dim) == ("hash-256", 256)
    assert small.embed_passages(["a b", "c"]).shape == (2, 256)


def test_env_var_is_used_when_no_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMFLOW_EMBEDDER", "hash:64")
    assert make_embedder().dim == 64
    assert make_embedder("hash:32").dim == 32  # an explicit spec wins


def test_embedder_instances_pass_through() -> None:
    mine = HashEmbedder(dim=16)
    assert make_embedder(mine) is mine
    with pytest.raises(ConfigurationError, match="not an embedder"):
        make_embedder(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", ["word2vec", "hashing", "openai-ish:x", "local:bge-m3"])
def test_unknown_spec_lists_the_choices(spec: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        make_embedder(spec)
    message = str(info.value)
    if spec.startswith("local:"):
        assert "multilingual-e5-small" in message
    else:
        for choice in ("'local'", "'hash'", "'openai:<model>'", "'sentence-transformers:"):
            assert choice in message


@pytest.mark.parametrize("spec", ["hash:abc", "hash:0", "hash:-3"])
def test_bad_hash_dimension(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="hash embedder dimension"):
        make_embedder(spec)


def test_openai_spec_builds_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for name in ("MEMFLOW_EMBED_BASE_URL", "MEMFLOW_EMBED_MODEL", "MEMFLOW_EMBED_DIM"):
        monkeypatch.delenv(name, raising=False)
    emb = make_embedder("openai:text-embedding-3-large")
    assert isinstance(emb, OpenAIEmbedder)
    assert (emb.name, emb.dim) == ("openai:text-embedding-3-large", 3072)
    default = make_embedder("openai")
    assert isinstance(default, OpenAIEmbedder)
    assert (default.name, default.dim) == ("openai:text-embedding-3-small", 1536)
    emb.close()
    default.close()


def test_openai_spec_without_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "MEMFLOW_EMBED_API_KEY", "MEMFLOW_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        make_embedder("openai")


def test_sentence_transformers_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import fail, whether or not the package is installed.
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'memflow\[sentence-transformers\]'"):
        make_embedder("sentence-transformers:/models/all-MiniLM-L6-v2")


def test_sentence_transformers_needs_a_path() -> None:
    with pytest.raises(ConfigurationError, match="needs a model path"):
        make_embedder("sentence-transformers")


def test_hash_embeddings_are_deterministic_and_normalised() -> None:
    a = make_embedder("hash:128").embed_passages(["Priya ran 5 km"])
    b = make_embedder("hash:128").embed_passages(["Priya ran 5 km"])
    np.testing.assert_array_equal(a, b)
    assert float(np.linalg.norm(a[0])) == pytest.approx(1.0, rel=1e-5)
