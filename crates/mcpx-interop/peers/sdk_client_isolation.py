"""A client written with the Python SDK (`mcp` on PyPI) that checks that a gateway's sessions never
mix: it asks many questions at once and says who answered each.

`sdk_client_isolation.py URL NAME CALLS PREFIX` connects to URL over Streamable HTTP as NAME,
declaring elicitation and sampling, and calls PREFIX`greet` (the server elicits) and
PREFIX`summarize` (the server samples) CALLS times each, all at once. Every question is answered
with NAME and the question's own text, so an answer that reaches another caller shows who
answered it. Prints one JSON object on stdout: the questions this client was asked and every
call's result; the Rust test asserts it.
"""

import asyncio
import json
import sys

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

# At most this many calls per tool (the test's load stays bounded).
MAX_CALLS = 50


async def main():
    url, name, calls, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if not 0 < calls <= MAX_CALLS:
        raise SystemExit(f"CALLS must be 1..{MAX_CALLS}")
    asked = []

    async def elicit(context, params):
        asked.append({"kind": "elicitation", "text": params.message})
        return types.ElicitResult(
            action="accept", content={"name": f"{name} answering {params.message}", "age": 7}
        )

    async def sample(context, params):
        content = params.messages[0].content
        text = content.text if isinstance(content, types.TextContent) else ""
        asked.append({"kind": "sampling", "text": text})
        return types.CreateMessageResult(
            role="assistant",
            model="scripted",
            stopReason="endTurn",
            content=types.TextContent(type="text", text=f"summary by {name} of {text}"),
        )

    async def call(tool, question, arguments):
        try:
            result = await session.call_tool(prefix + tool, arguments)
            text = result.content[0].text if result.content else ""
            return {"tool": tool, "question": question, "text": text, "isError": result.isError}
        except McpError as error:
            return {"tool": tool, "question": question, "error": error.error.message}

    async with streamable_http_client(url) as (read, write, _):
        async with ClientSession(
            read,
            write,
            elicitation_callback=elicit,
            sampling_callback=sample,
            client_info=types.Implementation(name=name, version="0"),
        ) as session:
            await session.initialize()
            await session.list_tools()
            greetings = [
                call("greet", f"{name} question {i}", {"question": f"{name} question {i}"})
                for i in range(calls)
            ]
            summaries = [
                call("summarize", f"{name} text {i}", {"text": f"{name} text {i}"})
                for i in range(calls)
            ]
            results = await asyncio.gather(*greetings, *summaries)
    print(json.dumps({"client": name, "asked": asked, "results": results}), flush=True)


asyncio.run(main())
