"""A LangGraph graph for the interop suite, served by `langgraph dev` (LangGraph API's own A2A
endpoint, `/a2a/<assistant id>`): one node, a deterministic model of its own kind (no network
model). It answers "langgraph peer answers: <the user's text>"; a text holding "interop:hold"
makes it wait (up to 120 s, or until the run is cancelled) before answering.
"""

import asyncio

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

HOLD_SECONDS = 120


async def answer(state: MessagesState) -> dict:
    said = next((m.text for m in reversed(state["messages"]) if m.type == "human"), "")
    if "interop:hold" in said:
        await asyncio.sleep(HOLD_SECONDS)
    return {"messages": [AIMessage(content=f"langgraph peer answers: {said[:200]}")]}


builder = StateGraph(MessagesState)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile(name="langgraph_peer")
