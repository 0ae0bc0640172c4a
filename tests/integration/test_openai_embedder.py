"""OpenAIEmbedder against a scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import openai
import pytest

from memflow.embed.base import Embedder
from memflow.embed.openai import OpenAIEmbedder
from memflow.errors import ConfigurationError, EmbeddingError
from tests.support.fake_openai import Embeddings, FakeOpenAI, HttpError, WrongDim, fake_vector


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(embed_dim=8) as server:
        yield server


def embedder(fake: FakeOpenAI, **kwargs: object) -> OpenAIEmbedder:
    options: dict[str, object] = {
        "base_url": fake.base_url,
        "model": "fake-embed",
        "dimensions": 8,
        "api_key": "k",
        "max_retries": 0,
        "env": {},
    }
    options.update(kwargs)
    return OpenAIEmbedder(**options)  # type: ignore[arg-type]


def test_batches_and_returns_unit_vectors_in_order(fake: FakeOpenAI) -> None:
    texts = [f"text {i}" for i in range(5)]
    with embedder(fake, batch_size=2) as emb:
        out = emb.embed_passages(texts)
        assert isinstance(emb, Embedder)
        assert emb.name == "openai:fake-embed"
    assert out.shape == (5, 8)
    assert out.dtype == np.float32
    assert [r.body["input"] for r in fake.embedding_requests] == [
        ["text 0", "text 1"],
        ["text 2", "text 3"],
        ["text 4"],
    ]
    assert fake.embedding_requests[0].body["model"] == "fake-embed"
    assert fake.embedding_requests[0].body["encoding_format"] == "float"
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(out[3], fake_vector("text 3", 8), rtol=1e-5, atol=1e-6)


def test_identical_texts_are_sent_once(fake: FakeOpenAI) -> None:
    with embedder(fake) as emb:
        out = emb.embed_passages(["alpha", "beta", "alpha", "alpha"])
    assert len(fake.embedding_requests) == 1
    assert fake.embedding_requests[0].body["input"] == ["alpha", "beta"]
    np.testing.assert_array_equal(out[0], out[2])
    assert not np.allclose(out[0], out[1])


def test_query_vector_and_blank_text(fake: FakeOpenAI) -> None:
    with embedder(fake) as emb:
        query = emb.embed_query("where did Rosalind run?")
        blank = emb.embed_passages([""])
    assert query.shape == (8,)
    assert blank.shape == (1, 8)
    assert fake.embedding_requests[-1].body["input"] == [" "]  # endpoints reject empty input


def test_wrong_dimension_is_an_embedding_error(fake: FakeOpenAI) -> None:
    fake.script_embeddings(WrongDim(3))
    with embedder(fake) as emb, pytest.raises(EmbeddingError, match="3-dim vectors, expected 8"):
        emb.embed_passages(["a", "b"])


def test_server_error_is_an_embedding_error(fake: FakeOpenAI) -> None:
    fake.script_embeddings(HttpError(500, "boom"))
    with embedder(fake) as emb, pytest.raises(EmbeddingError, match="HTTP 500") as info:
        emb.embed_passages(["a"])
    assert isinstance(info.value.__cause__, openai.InternalServerError)
    assert len(fake.embedding_requests) == 1


def test_transient_server_error_is_retried_when_allowed(fake: FakeOpenAI) -> None:
    fake.script_embeddings(HttpError(503, "busy"))
    with embedder(fake, max_retries=1) as emb:
        out = emb.embed_passages(["a"])
    assert out.shape == (1, 8)
    assert len(fake.embedding_requests) == 2


def test_unknown_dimension_is_probed_once(fake: FakeOpenAI) -> None:
    fake.set_default("/v1/embeddings", Embeddings(12))
    with embedder(fake, model="nomic-embed-text", dimensions=None) as emb:
        assert emb.dim == 12
        assert len(fake.embedding_requests) == 1
        assert emb.embed_passages(["x"]).shape == (1, 12)


def test_failed_probe_says_how_to_set_the_dimension(fake: FakeOpenAI) -> None:
    fake.script_embeddings(HttpError(500))
    with pytest.raises(EmbeddingError, match="MEMFLOW_EMBED_DIM"):
        embedder(fake, model="nomic-embed-text", dimensions=None)


def test_dimensions_parameter_only_for_text_embedding_3(fake: FakeOpenAI) -> None:
    with embedder(fake, model="text-embedding-3-small", dimensions=8) as emb:
        assert emb.dim == 8
        emb.embed_passages(["x"])
    with embedder(fake, model="other-model", dimensions=8) as emb:
        emb.embed_passages(["y"])
    first, second = fake.embedding_requests
    assert first.body["dimensions"] == 8
    assert "dimensions" not in second.body


def test_settings_come_from_env_when_not_given(fake: FakeOpenAI) -> None:
    env = {
        "MEMFLOW_EMBED_BASE_URL": fake.base_url,
        "MEMFLOW_EMBED_MODEL": "env-model",
        "MEMFLOW_EMBED_DIM": "8",
        "OPENAI_API_KEY": "openai-key",
        "MEMFLOW_EMBED_API_KEY": "memflow-key",
    }
    with OpenAIEmbedder(env=env, max_retries=0) as emb:
        assert (emb.name, emb.dim) == ("openai:env-model", 8)
        emb.embed_passages(["x"])
    request = fake.embedding_requests[0]
    assert request.body["model"] == "env-model"
    assert request.headers["authorization"] == "Bearer memflow-key"
    with OpenAIEmbedder(model="arg-model", env=env, max_retries=0) as emb:
        assert emb.name == "openai:arg-model"


def test_bad_settings_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="MEMFLOW_EMBED_DIM must be an integer"):
        OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", env={"MEMFLOW_EMBED_DIM": "big"})
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIEmbedder(env={})
    with pytest.raises(ConfigurationError, match="positive"):
        OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", dimensions=0, env={})
