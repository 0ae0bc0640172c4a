"""A stand-in for a chat model, so the examples run with no network and no LLM.

It follows two rules: a statement from the user becomes a call of the memorize tool; a question is
answered with the remembered line that shares the most words with it (from the system prompt,
under ``What you remember:``). It keeps every prompt it was given in ``prompts``, so an example
can show (and check) that the remembered fact reached the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

MEMORY_HEADER = "What you remember:"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def best_line(question: str, lines: Sequence[str]) -> str | None:
    """The line sharing the most words with ``question`` (None: no line shares any)."""
    scored = [(len(_words(question) & _words(line)), line) for line in lines if line.strip()]
    score, line = max(scored, default=(0, ""))
    return line if score else None


def memories_in(prompt: str) -> list[str]:
    """The lines under ``What you remember:`` in a prompt."""
    return prompt.split(MEMORY_HEADER, 1)[1].splitlines() if MEMORY_HEADER in prompt else []


def reply_to(question: str, prompt: str) -> str:
    line = best_line(question, memories_in(prompt))
    return f"You told me: {line}" if line else "I don't know that yet."


class RuleBasedChatModel(BaseChatModel):
    """A LangChain chat model that follows the module's two rules."""

    tool_name: str = "memorize_turn"
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "rule-based-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RuleBasedChatModel:
        return self  # it knows its one tool by name

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        last = messages[-1]
        text = str(last.content).strip()
        if isinstance(last, ToolMessage):
            reply = AIMessage(content="I'll remember that.")
        elif text.endswith("?"):
            system = next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")
            reply = AIMessage(content=reply_to(text, system))
        else:
            call = {
                "name": self.tool_name,
                "args": {"text": text},
                "id": f"call-{len(self.prompts)}",
            }
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])
