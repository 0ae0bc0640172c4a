"""memflow inside agent frameworks (optional extras; docs/integrations/).

- :mod:`memflow.integrations.langchain`: ``MemflowRetriever`` (a LangChain ``BaseRetriever``) and
  ``MemorizeTurnTool`` (a tool that memorises a conversation turn); ``pip install
  'memflow[langchain]'``.
- :mod:`memflow.integrations.langgraph`: ``MemflowStore``, a LangGraph ``BaseStore`` whose items
  are memflow documents; ``pip install 'memflow[langgraph]'``.
- :mod:`memflow.integrations.llama_index`: ``MemflowRetriever``, a LlamaIndex ``BaseRetriever``;
  ``pip install 'memflow[llama-index]'``.

Importing this package imports no framework; each module imports its own.
"""
