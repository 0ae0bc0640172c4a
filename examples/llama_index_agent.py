"""A LlamaIndex chat engine whose long-term memory is memflow, with a rule-based stand-in for the
LLM (no network, no model).

Each user statement is memorised in memflow; LlamaIndex's ``ContextChatEngine`` retrieves with
memflow's retriever before every answer and puts what it found into the system prompt. A later
chat (a new engine, an empty chat history) asks about the fact and gets it back from memflow.

    pip install 'memflow[llama-index]'
    python examples/llama_index_agent.py

The store is what ``memflow.Memory.open()`` finds (``MEMFLOW_DATABASE_URL``, else the embedded
server), with the embedder of ``MEMFLOW_EMBEDDER`` (default: the local model).
"""

from __future__ import annotations

import re
from typing import Any

from llama_index.core.chat_engine import ContextChatEngine
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.memory import ChatMemoryBuffer
from pydantic import Field

import memflow
from memflow.integrations.common import turn_document
from memflow.integrations.llama_index import MemflowRetriever

DATASET = "example-llama-index"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


class RuleBasedLLM(CustomLLM):
    """Stands in for an LLM: it answers the prompt's last question with the line of the prompt's
    context that shares the most words with it, and keeps every prompt in ``prompts``."""

    prompts: list[str] = Field(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="rule-based-fake")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        lines = [line for line in prompt.splitlines() if line.strip() != "assistant:"]
        *context, question = [line for line in lines if line.strip()]
        scored = [(len(_words(question) & _words(line)), line) for line in context]
        score, line = max(scored, default=(0, ""))
        return CompletionResponse(text=f"You told me: {line}" if score else "I don't know yet.")

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        yield self.complete(prompt, formatted, **kwargs)


def chat_engine(retriever: MemflowRetriever, llm: RuleBasedLLM) -> ContextChatEngine:
    # a word-count tokenizer keeps the chat history offline (the default one downloads a file)
    history = ChatMemoryBuffer.from_defaults(token_limit=2000, tokenizer_fn=str.split)
    return ContextChatEngine.from_defaults(retriever=retriever, llm=llm, memory=history)


def main() -> None:
    with memflow.Memory.open() as mem:
        mem.drop_dataset(DATASET)  # start from an empty memory
        ds = mem.dataset(DATASET)
        retriever = MemflowRetriever(ds, top_k=3, budget_tokens=200)
        llm = RuleBasedLLM()
        statement = "Lou's piano lesson moved to Thursdays at 6 pm."
        ds.memorize(turn_document(statement, speaker="user", source="llama-index-chat"))
        print("user:", statement)
        question = "When is Lou's piano lesson?"
        answer = chat_engine(retriever, llm).chat(question)  # a later chat, a new engine
        print("user:", question)
        print("assistant:", answer.response)
        print("\nthe model's last prompt:\n" + llm.prompts[-1])
        assert "Thursdays at 6 pm" in llm.prompts[-1], (
            "the remembered fact did not reach the prompt"
        )


if __name__ == "__main__":
    main()
