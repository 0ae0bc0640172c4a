"""Long statements cut into pieces (memflow.text.pieces) and inputs cut to a model's window."""

from __future__ import annotations

import numpy as np

from memflow.embed.base import BaseEmbedder, Matrix, clip_to_window
from memflow.ingest.rules import point_texts
from memflow.text.document import Chunk
from memflow.text.pieces import chars_within, split_long, text_size

EN = " ".join(
    f"On day {i} the harbour crew painted buoy number {i} a brighter orange." for i in range(40)
)
ZH = "".join(f"第{i}天，港口工人把{i}号浮标漆成了更亮的橙色。" for i in range(80))


def test_a_short_text_stays_whole_and_a_long_one_is_cut_at_sentences() -> None:
    assert split_long("Ana: see you at nine.") == ["Ana: see you at nine."]
    pieces = split_long(EN)
    assert len(pieces) > 3
    assert all(40 <= text_size(p) <= 100 for p in pieces)
    assert all(p.endswith(".") for p in pieces)  # sentence boundaries
    assert " ".join(pieces) == EN  # nothing lost, nothing added
    zh = split_long(ZH)
    assert len(zh) > 3 and "".join(zh) == ZH and all(p.endswith("。") for p in zh)


def test_a_sentence_without_ends_is_cut_between_words() -> None:
    run_on = " ".join(f"word{i}" for i in range(500))
    pieces = split_long(run_on)
    assert len(pieces) >= 5 and all(text_size(p) <= 100 for p in pieces)
    assert " ".join(pieces) == run_on


def test_every_piece_of_a_long_turn_keeps_the_speaker() -> None:
    turn = Chunk(index=0, key="t0", text=EN, speaker="Mia")
    texts = point_texts(turn)
    assert len(texts) > 3 and all(t.startswith("Mia: ") for t in texts)
    short = Chunk(index=1, key="t1", text="Sounds good.", speaker="Leo")
    assert point_texts(short) == ["Leo: Sounds good."]


def test_clip_keeps_at_least_the_window_and_cuts_far_past_it() -> None:
    assert clip_to_window("short text", 512) == "short text"
    words = " ".join(f"w{i}" for i in range(5000))
    clipped = clip_to_window(words, 512)
    assert words.startswith(clipped) and len(clipped.split()) == 512
    zh = "港口" * 5000
    cut = clip_to_window(zh, 512)
    assert zh.startswith(cut) and 512 <= len(cut) <= 3 * 512 + 1


class _Recording(BaseEmbedder):
    name, dim, max_tokens = "rec", 4, 16

    def __init__(self) -> None:
        self.seen: list[str] = []

    def _embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        self.seen += texts
        return np.ones((len(texts), 4), dtype=np.float32)


def test_an_embedder_with_a_window_never_receives_more() -> None:
    emb = _Recording()
    emb.embed_passages([" ".join(["x"] * 100), "tiny"])
    emb.embed_query(" ".join(["y"] * 100))
    assert [len(t.split()) for t in emb.seen] == [16, 1, 16]


def test_the_cache_embeds_each_text_once_and_stays_bounded() -> None:
    from memflow.embed.cache import CachingEmbedder

    inner = _Recording()
    batches: list[int] = []
    cache = CachingEmbedder(inner, step=2, on_embedded=batches.append, max_entries=4)
    first = cache.embed_passages(["a", "b", "a", "c"])
    assert first.shape == (4, 4) and inner.seen == ["a", "b", "c"] and batches == [2, 1]
    cache.embed_passages(["c", "b"])
    assert inner.seen == ["a", "b", "c"] and cache.reused == 3
    cache.embed_passages(["d", "e", "f"])
    assert len(cache.vectors) == 4 and not cache.known("a") and cache.known("f")


def test_chars_within_counts_a_cjk_character_as_half_a_word() -> None:
    english = "one two three four five"
    assert chars_within(english, 3) == len("one two three ")
    assert english[: chars_within(english, 3)].split() == ["one", "two", "three"]
    assert chars_within(english, 99) == len(english)
    chinese = "我们周六去果园摘苹果"  # ten characters: five words
    assert chars_within(chinese, 2) == 4
    assert chars_within(chinese, 5) == len(chinese)
    assert text_size(chinese[: chars_within(chinese, 2.5)]) == 2.5
