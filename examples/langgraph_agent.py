"""A LangGraph agent whose long-term memory is memflow (``MemflowStore``), run on the async API,
with a rule-based stand-in for the chat model (examples/fake_chat.py: no network, no LLM).

The graph has two nodes: ``agent`` searches the user's memories in the store and puts them into
the system prompt before the model speaks; ``remember`` writes what the model asked to remember.
Two threads share the store: the first stores a fact, the second asks about it.

    pip install 'memflow[langgraph]'
    python examples/langgraph_agent.py

The store is what ``memflow.AsyncMemory.open()`` finds (``MEMFLOW_DATABASE_URL``, else the
embedded server), with the embedder of ``MEMFLOW_EMBEDDER`` (default: the local model).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fake_chat import MEMORY_HEADER, RuleBasedChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

import memflow
from memflow.integrations.langgraph import MemflowStore

DATASET = "example-langgraph"
model = RuleBasedChatModel(tool_name="remember")


def namespace(config: RunnableConfig) -> tuple[str, ...]:
    return ("memories", config["configurable"]["user_id"])


async def agent(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> Any:
    question = str(state["messages"][-1].content)
    found = await store.asearch(namespace(config), query=question, limit=3)
    memories = "\n".join(item.value["text"] for item in found)
    system = SystemMessage(f"You are a helpful assistant.\n{MEMORY_HEADER}\n{memories}")
    return {"messages": [await model.ainvoke([system, *state["messages"]])]}


async def remember(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> Any:
    last = state["messages"][-1]
    assert isinstance(last, AIMessage)
    out = []
    for call in last.tool_calls:
        await store.aput(namespace(config), uuid.uuid4().hex, {"text": call["args"]["text"]})
        out.append(ToolMessage("Remembered.", tool_call_id=call["id"]))
    return {"messages": out}


def route(state: MessagesState) -> str:
    last = state["messages"][-1]
    return "remember" if isinstance(last, AIMessage) and last.tool_calls else END


async def main() -> None:
    async with memflow.AsyncMemory.open() as mem:
        await mem.drop_dataset(DATASET)  # start from an empty memory
        store = MemflowStore(
            async_dataset=mem.dataset(DATASET), fields=["text"], scopes={"user": 1}
        )
        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("remember", remember)
        builder.add_edge(START, "agent")
        builder.add_conditional_edges("agent", route, ["remember", END])
        builder.add_edge("remember", "agent")
        graph = builder.compile(store=store)
        for thread, text in [
            ("1", "Lou's flat is at 12 Quay Street."),
            ("2", "Where is Lou's flat?"),
        ]:
            config: RunnableConfig = {"configurable": {"thread_id": thread, "user_id": "ada"}}
            result = await graph.ainvoke({"messages": [HumanMessage(text)]}, config)
            print(f"[thread {thread}] user:", text)
            print(f"[thread {thread}] assistant:", result["messages"][-1].content)
        prompt = str(model.prompts[-1][0].content)
        print("\nthe model's last system prompt:\n" + prompt)
        assert "12 Quay Street" in prompt, "the remembered fact did not reach the model's prompt"
        print("\nstored:", [item.value for item in await store.asearch(("memories", "ada"))])


if __name__ == "__main__":
    asyncio.run(main())
