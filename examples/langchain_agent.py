"""A LangChain agent loop whose long-term memory is memflow, with a rule-based stand-in for the
chat model (examples/fake_chat.py: no network, no LLM).

In a first conversation the user states a fact and the model calls memflow's memorize tool; in a
later one the user asks about it, memflow's retriever puts the fact into the system prompt, and
the model answers with it.

    pip install 'memflow[langchain]'
    python examples/langchain_agent.py

The store is what ``memflow.Memory.open()`` finds (``MEMFLOW_DATABASE_URL``, else the embedded
server), with the embedder of ``MEMFLOW_EMBEDDER`` (default: the local model).
"""

from __future__ import annotations

from fake_chat import MEMORY_HEADER, RuleBasedChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool

import memflow
from memflow.integrations.langchain import MemflowRetriever, MemorizeTurnTool

DATASET = "example-langchain"


def conversation(
    model: RuleBasedChatModel, retriever: MemflowRetriever, tools: list[BaseTool], text: str
) -> str:
    """One user message: recall, then let the model answer or call tools until it answers."""
    recalled = [d.page_content for d in retriever.invoke(text) if d.page_content]
    system = "You are a helpful assistant.\n" + MEMORY_HEADER + "\n" + "\n".join(recalled)
    messages: list[BaseMessage] = [SystemMessage(system), HumanMessage(text)]
    by_name = {t.name: t for t in tools}
    while True:
        reply = model.bind_tools(tools).invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return str(reply.content)
        messages += [by_name[call["name"]].invoke(call) for call in reply.tool_calls]


def main() -> None:
    with memflow.Memory.open() as mem:
        mem.drop_dataset(DATASET)  # start from an empty memory
        ds = mem.dataset(DATASET)
        user = {"user": "ada"}
        retriever = MemflowRetriever(dataset=ds, scope=user, top_k=3, budget_tokens=200)
        tools: list[BaseTool] = [MemorizeTurnTool(dataset=ds, scope=user)]
        model = RuleBasedChatModel()
        for text in ["My sister Lou's birthday is on 14 July.", "When is Lou's birthday?"]:
            print("user:", text)
            print("assistant:", conversation(model, retriever, tools, text))
        prompt = str(model.prompts[-1][0].content)
        print("\nthe model's last system prompt:\n" + prompt)
        assert "14 July" in prompt, "the remembered fact did not reach the model's prompt"


if __name__ == "__main__":
    main()
