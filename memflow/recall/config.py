"""Every constant of episodic retrieval (retrieval.md), in one frozen pydantic object.

Defaults follow m_flow v0.3.x unless noted; the LoCoMo benchmark may revise them. Override per call
with ``RecallConfig(...).model_copy(update={...})`` or by constructing a new object.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from memflow.text.tokens import TokenCounterName

DisplayMode = Literal["summary", "highly_related", "detail"]
SearchMode = Literal["episodic", "vector", "lexical", "procedural"]
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

    # --- 3. bonuses (on the raw cosine-distance scale: each bonus below is a share of the spread
    # between the best and the worst hit of the hit's collection, as m_flow applies them to
    # per-collection min-max scores)
    keyword_bonus: float = 0.15
    number_same_unit: float = 0.12
    number_other_unit: float = 0.03
    number_bonus_floor: float = 0.24  # the number bonus is at most this much in total
    english_term_bonus: float = 0.08
    english_term_max: float = 0.16
    exact_match_min_score: float = (
        0.10  # exact-match bonuses only for hits this far into the spread
    )

    # --- 5. graph projection
    max_relevant_ids: int = Field(default=300, ge=1)
    max_projection_nodes: int = Field(default=600, ge=1)
    hub_fanout: int = Field(default=50, ge=1)
    entity_degree_cap: int = Field(default=1000, ge=1)  # links counted for entity specificity

    # --- 6-7. episode scoring (memflow.recall.scoring), all on raw cosine distances.
    # The cheapest evidence chain: a FacetPoint (its distance plus the unit rules), a facet text,
    # an entity (less the more episodes it is linked to), an edge text, or the episode summary;
    # each kind of chain pays its cost. Then corroboration: the episode's second-best point, its
    # best facet window and its summary, weighted. Chosen on the LoCoMo tune half
    # (docs/benchmarks/locomo.md); chains other than points never decide there (dialog turns are
    # the closest texts), their costs keep documents' facet titles and named entities in play.
    point_cost: float = Field(default=0.0, ge=0)
    facet_cost: float = Field(default=0.06, ge=0)
    entity_cost: float = Field(default=0.05, ge=0)
    entity_generic_cost: float = Field(default=0.3, ge=0)  # x (1 - specificity), 0..1
    edge_cost: float = Field(default=0.1, ge=0)  # edge texts are composites, like summaries
    direct_cost: float = Field(default=0.1, ge=0)
    second_point_weight: float = Field(default=0.1, ge=0)
    second_point_miss: float = Field(default=0.05, ge=0)  # the gap assumed when there is none
    facet_support_weight: float = Field(default=0.6, ge=0)
    summary_support_weight: float = Field(default=0.1, ge=0)
    time_bonus_max: float = 0.04
    # Added when the query names one day (issue 12: a dated question ranks that day first);
    # LoCoMo tune half: 0.0 -> 0.08 lifts ev@200 0.647 -> 0.655, flat from 0.08 to 0.2.
    time_bonus_day: float = Field(default=0.08, ge=0)
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
    # How budgets count tokens (memflow.text.tokens): "words" (whitespace words, CJK characters
    # as half) or "tiktoken" (cl100k_base; the optional extra memflow[tiktoken]).
    token_counter: TokenCounterName = "words"
    # highly_related: FacetPoints ranked by u(unit) + lambda * (EpisodeScore - best EpisodeScore)
    # + mu * d(best unit of its facet), u = raw cosine distance plus the unit rules (LoCoMo tune
    # half, docs/benchmarks/locomo.md).
    episode_prior_lambda: float = 0.4
    facet_prior_mu: float = 0.1
    # Query-aware unit rules (memflow.recall.unitrules), also measured on LoCoMo: a turn of another
    # speaker than the one the query names, shared content words (capped), question-only turns.
    speaker_penalty: float = Field(default=0.05, ge=0)
    term_overlap_bonus: float = Field(default=0.02, ge=0)
    term_overlap_cap: int = Field(default=2, ge=0)
    question_turn_penalty: float = Field(default=0.02, ge=0)
    # Statements of a decision or an owner ("Decision: …", "负责人：…") pull forward among the
    # highly_related units; a facet whose title is an aspect the query names ("约束" in
    # "有哪些约束？") pulls its whole chain forward, in the episode score and in the units. Neither changes the LoCoMo figures (dialog turns
    # rarely carry the markers; its facet titles are keyword lists): sized on documents, so
    # that the named section and a decision outrank a neighbour's nearer sentence.
    decision_bonus: float = Field(default=0.05, ge=0)
    facet_title_bonus: float = Field(default=0.1, ge=0)
    # highly_related keeps only units within this distance of the best unit's rank (None: all
    # units of every scored episode compete for the budget): the rest is padding, not evidence.
    # LoCoMo replay (docs/benchmarks/locomo-newcomer*.md): 0.2 and more change no figure on either
    # half; 0.15 gains 0.002 on the tune half but loses 0.002 on the test half, 0.1 loses more.
    relevance_cutoff: float | None = Field(default=0.2, ge=0)
    # Apply the same rules to the ``vector`` baseline's turns (benchmarks: what the graph adds).
    vector_unit_rules: bool = False
    highly_related_facets: bool = False
    highly_related_names: bool = False  # group headers "[time] [name]" instead of "[time]"
    # Episodes whose units compete for the highly_related budget; 0 = every scored episode.
    highly_related_episodes: int = Field(default=0, ge=0)
    # highly_related: every point of the best this-many episodes is a candidate unit, with its
    # exact distance, also when the wide recall missed it (one more statement, sql/recall.sql).
    expand_episodes: int = Field(default=3, ge=0)
    detail_max_facets: int = Field(default=4, ge=0)
    detail_max_points: int = Field(default=8, ge=0)
    detail_max_entities: int = Field(default=2, ge=0)

    # --- procedures: an episodic query that asks how to do something (memflow.recall.procedural)
    # gets the best current procedure ranked first when its score (cosine distance, a step or
    # context hit +0.05) is at most the max and beats the best episode's score by the margin;
    # max 0 turns it off. Set on a small invented set of runbooks, notes and chats
    # (benchmarks/procedures_howto.py, docs/benchmarks/procedures.md): right procedures beat the
    # best episode by 0.04-0.12 there, chit-chat "how do you ..." questions by less than 0.01.
    how_to_procedure_max_score: float = Field(default=0.2, ge=0)
    how_to_procedure_margin: float = Field(default=0.02, ge=0)

    # --- time parsing
    timezone: str = "UTC"

    # --- facts that change (revision 0004): a hit on a replaced fact costs this much more (a
    # Facet's or Episode's hit: times the share of its points that were replaced); a query about
    # the past ("before", "以前") moves the cost to the facts that replaced them.
    superseded_penalty: float = Field(default=0.3, ge=0)
    # Present-tense questions get the present (memflow.recall.present): of two statements that
    # answer the same question with different values, the newer first, the older marked
    # possibly outdated. Off: ranking ignores time (as before issue 26).
    present_order: bool = True
    # Statements paired by their text alone must both be this near the best recalled point's
    # unit score (raw cosine distance), among the first ``present_pool`` points.
    # Chosen on the tune half of benchmarks/updates (generator) and of LongMemEval_S
    # (docs/benchmarks/updates.md).
    present_margin: float = Field(default=0.05, ge=0)
    present_pool: int = Field(default=20, ge=0)
    # ... or within ``present_reach`` of it when the words in front of their values agree (what
    # they are the value of) or the newer says it changed ("actually", "moved to"): a newer
    # statement is often longer ("Offsite update: we're going to …").
    present_reach: float = Field(default=0.15, ge=0)
    # Asked "now" / "currently" / "现在": two near statements sharing this share of the smaller
    # one's content words are two answers to one question (the band rehearses in the hall / at
    # the centre). Chosen on the tune half of benchmarks/updates.
    present_overlap: float = Field(default=0.5, ge=0, le=1)

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
    "RecallConfig",
    "SearchMode",
]
