"""Every constant of episodic retrieval (retrieval.md), in one frozen pydantic object.

Defaults follow m_flow v0.3.x unless noted; the LoCoMo benchmark may revise them. Override per call
with ``RecallConfig(...).model_copy(update={...})`` or by constructing a new object.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

DisplayMode = Literal["summary", "highly_related", "detail"]
SearchMode = Literal["episodic", "vector", "lexical"]
Normalization = Literal["minmax", "raw"]
# The lists where one is needed (validation messages, CLI choices): from the types, never repeated.
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
DISPLAY_MODES: tuple[DisplayMode, ...] = get_args(DisplayMode)


class RecallConfig(BaseModel):
    """Knobs of recall, scoring and rendering, and the defaults of ``Dataset.search`` (``mode``,
    ``top_k``, ``display``, ``budget_tokens``) and ``memflow search``. Scores are distances:
    smaller is better."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- 2. vector recall
    wide_search_top_k: int = Field(default=100, ge=1)  # per collection (m_flow default)
    timed_top_k_max: int = Field(default=300, ge=1)  # with a confident time span: min(2k, this)
    time_confidence_min: float = Field(default=0.4, ge=0.0, le=1.0)
    ef_search: int = Field(default=200, ge=1)  # hnsw.ef_search; the SQL layer uses max(this, k)

    # --- 3. normalisation and bonuses
    # LoCoMo (docs/benchmarks/locomo.md) favours "raw", but the bundle constants below are tuned on
    # the min-max scale and the seed examples break with raw distances: kept "minmax" for now.
    normalize: Normalization = "minmax"
    keyword_bonus: float = 0.15
    number_same_unit: float = 0.12
    number_other_unit: float = 0.03
    number_bonus_floor: float = 0.24  # the number bonus is at most this much in total
    english_term_bonus: float = 0.08
    english_term_max: float = 0.16
    exact_match_min_score: float = 0.10  # exact-match bonuses only apply to scores >= this

    # --- 5. graph projection
    max_relevant_ids: int = Field(default=300, ge=1)
    max_projection_nodes: int = Field(default=600, ge=1)
    hub_fanout: int = Field(default=50, ge=1)

    # --- 6-7. bundle scoring
    hop_cost: float = 0.05
    edge_miss_cost: float = 0.9
    direct_episode_penalty: float = 0.3
    # m_flow's facet confidence discount (not in the seed article): a facet whose own distance is
    # below the strong threshold pays a flat facet->episode step, below the weak one a fraction.
    facet_discount: bool = True
    facet_discount_strong_below: float = 0.1
    facet_discount_strong_edge: float = 0.1  # the flat step is this + hop_cost
    facet_discount_weak_below: float = 0.2
    facet_discount_weak_factor: float = 0.3
    time_bonus_max: float = 0.04
    time_bonus_floor: float = 0.08  # the time bonus never lowers a score below this

    # --- baselines
    # mode="vector": plain top-k over FacetPoints (turns, sentences); with this, facet texts too.
    vector_facets: bool = False

    # --- 8. output
    mode: SearchMode = "episodic"
    top_k: int = Field(default=10, ge=1)
    display: DisplayMode = "summary"
    # highly_related context budget (summary and detail keep whole episode blocks: no budget
    # unless the call passes one)
    budget_tokens: int = Field(default=500, ge=1)
    # highly_related: FacetPoints ranked by d(unit) + lambda * EpisodeScore + mu * d(best unit of
    # its facet), d = raw cosine distance (docs/benchmarks/locomo.md: on all
    # 1,536 LoCoMo questions this beat min-max distances, facet texts as units and lambda 0.3).
    episode_prior_lambda: float = 0.05
    facet_prior_mu: float = 0.1
    # Query-aware unit rules (memflow.recall.unitrules), also measured on LoCoMo: a turn of another
    # speaker than the one the query names, shared content words (capped), question-only turns.
    speaker_penalty: float = Field(default=0.05, ge=0)
    term_overlap_bonus: float = Field(default=0.02, ge=0)
    term_overlap_cap: int = Field(default=2, ge=0)
    question_turn_penalty: float = Field(default=0.02, ge=0)
    # Apply the same rules to the ``vector`` baseline's turns (benchmarks: what the graph adds).
    vector_unit_rules: bool = False
    highly_related_distance: Normalization = "raw"
    highly_related_facets: bool = False
    highly_related_names: bool = False  # group headers "[time] [name]" instead of "[time]"
    # Episodes whose units compete for the highly_related budget; 0 = every scored episode.
    highly_related_episodes: int = Field(default=0, ge=0)
    detail_max_facets: int = Field(default=4, ge=0)
    detail_max_points: int = Field(default=8, ge=0)
    detail_max_entities: int = Field(default=2, ge=0)

    # --- time parsing
    timezone: str = "UTC"

    def recall_k(self, time_confidence: float | None) -> int:
        """Rows per collection: doubled (capped) when the query carries a confident time span."""
        k = self.wide_search_top_k
        if time_confidence is not None and time_confidence >= self.time_confidence_min:
            return max(k, min(2 * k, self.timed_top_k_max))
        return k


__all__ = [
    "DISPLAY_MODES",
    "SEARCH_MODES",
    "DisplayMode",
    "Normalization",
    "RecallConfig",
    "SearchMode",
]
