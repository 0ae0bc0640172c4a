"""Chat roles: whose turns answer a question put to a person's chat with an assistant.

An agent's own chat history has two kinds of speaker: the person and the assistant (chat
applications store them as "user" and "assistant"). A question to such a memory is asked by the
person. When it speaks of the asker ("my setup", "what did I buy", "我的") and not of what the
assistant said, the person's own turns state what it asks about, while the assistant's long
answers share its words without saying anything about the person: the assistant's turns are
pushed back (+``role_penalty``). A question about what the assistant said ("the book you
recommended", "your list", "你推荐的") pushes the person's turns back instead; one about the
conversation itself ("what we discussed") pushes neither. A conversation without an assistant
speaker (people talking to each other) gets nothing from this rule: its speakers are matched by
name (:mod:`memflow.recall.unitrules`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memflow.recall.config import RecallConfig

# Speaker names that mark the assistant of a chat (compared case-insensitively).
ASSISTANT_ROLES = frozenset({"assistant", "ai", "bot", "chatbot", "助手", "助理"})
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b|我", re.IGNORECASE)
# What the assistant said, named in the question: "you (previously) recommended", "did you
# suggest", "your list", "你推荐的". A request ("can you recommend") is not one.
_SAID = (
    "said|told|mentioned|suggested|recommended|gave|provided|listed|shared|explained|described|"
    "proposed|wrote|named|offered|advised"
)
_SAY = (
    "say|tell|mention|suggest|recommend|give|provide|list|share|explain|describe|propose|write|"
    "name|offer|advise"
)
_ASSISTANT_SAID = re.compile(
    rf"\byou(?:'ve|'d)?\s+(?:\w+\s+)?(?:{_SAID})\b"
    rf"|\b(?:did|have|had)\s+you\s+(?:\w+\s+)?(?:{_SAY}|{_SAID})\b"
    r"|\byour\s+(?:\w+\s+)?(?:answer|reply|response|suggestions?|recommendations?|advice|list|"
    r"explanation|tips?|ideas?)\b"
    r"|你(?:之前|刚才|上次|曾经?)\S{0,4}?(?:说|提到|推荐|建议|告诉|讲|列)"
    r"|你(?:说|提到|推荐|建议|告诉|讲|列出)(?:过|的)",
    re.IGNORECASE,
)


# The conversation itself, named in the question ("our last conversation", "we discussed",
# "我们之前聊过"): the answer may be either side's turn, so neither is pushed back.
_CONVERSATION = re.compile(
    r"\bour\s+(?:\w+\s+)?(?:conversations?|chats?|discussions?|talks?)\b"
    r"|\bwe\s+(?:\w+\s+)?(?:discussed|talked|chatted|spoke)\b"
    r"|我们(?:之前|上次|刚才|曾经?)?(?:聊|讨论|谈|说)",
    re.IGNORECASE,
)


def is_assistant(speaker: str | None) -> bool:
    return speaker is not None and speaker.strip().lower() in ASSISTANT_ROLES


@dataclass(frozen=True, slots=True)
class RoleRule:
    """Which role's turns a query pushes back: ``"assistant"``, ``"person"`` or None."""

    behind: str | None

    @classmethod
    def build(cls, query: str | None, speakers: Iterable[str | None]) -> RoleRule:
        """The rule of ``query`` over turns of these ``speakers``: none unless they include an
        assistant and someone else."""
        known = {s for s in speakers if s}
        if not query or not any(is_assistant(s) for s in known):
            return cls(None)
        if all(is_assistant(s) for s in known):
            return cls(None)
        if _ASSISTANT_SAID.search(query):
            return cls("person")
        if _CONVERSATION.search(query):
            return cls(None)
        if _FIRST_PERSON.search(query):
            return cls("assistant")
        return cls(None)

    def adjustment(self, speaker: str | None, config: RecallConfig) -> float:
        """+``role_penalty`` for a turn of the role the query does not ask about."""
        if self.behind is None or speaker is None or not config.role_penalty:
            return 0.0
        return config.role_penalty if is_assistant(speaker) == (self.behind == "assistant") else 0.0


__all__ = ["ASSISTANT_ROLES", "RoleRule", "is_assistant"]
