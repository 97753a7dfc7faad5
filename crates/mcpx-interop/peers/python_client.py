"""An MCP client written with the Python SDK (`mcp` on PyPI), driving `mcpx serve` for the
gateway tests.

`python_client.py stdio PROGRAM ARG...` spawns the gateway; `python_client.py http URL`
connects to it. Prints one JSON object per step on stdout; the Rust test asserts them.
The gateway fronts the workspace's demo server as `demo` and the MCP reference server as
`everything`.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

# What the user answers to the demo's questions, in order.
ANSWERS = []


async def elicit(context, params):
    return types.ElicitResult(action="accept", content=ANSWERS.pop(0))


def report(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


async def scenario(read, write):
    async with ClientSession(read, write, elicitation_callback=elicit) as session:
        init = await session.initialize()
        report("initialize", protocolVersion=init.protocolVersion, server=init.serverInfo.name)

        tools = await session.list_tools()
        report("tools", names=sorted(t.name for t in tools.tools))

        summed = await session.call_tool("demo__get-sum", {"a": 2, "b": 3})
        report("demo-sum", structured=summed.structuredContent, isError=summed.isError)

        reference = await session.call_tool("everything__get-sum", {"a": 20, "b": 22})
        report("everything-sum", text=reference.content[0].text, isError=reference.isError)

        try:
            await session.call_tool("demo__get-sum", {"a": 2, "b": "three"})
            report("rejected", code=None)
        except McpError as error:
            report("rejected", code=error.error.code, message=error.error.message,
                   data=error.error.data)

        # Sent without the SDK's own outputSchema check, which would refuse the drifted
        # result: what arrives is what the server sent.
        drifted = await session.send_request(
            types.ClientRequest(types.CallToolRequest(
                params=types.CallToolRequestParams(name="demo__drifting-output", arguments={}))),
            types.CallToolResult,
        )
        report("drifting", sum=drifted.structuredContent["sum"],
               big=str(drifted.structuredContent["big"]))

        steps = []

        async def progress(done, total, message):
            steps.append(done)

        counted = await session.call_tool("demo__count", {"steps": 3}, progress_callback=progress)
        report("progress", steps=steps, text=counted.content[0].text)

        ANSWERS.append({"party": 4, "time": "19:00"})
        booked = await session.call_tool("demo__book-table", {"restaurant": "Chez Rust"})
        report("elicited", text=booked.content[0].text)

        ANSWERS.append({"party": 40, "time": "19:00"})  # over the maximum of 12
        refused = await session.call_tool("demo__book-table", {"restaurant": "Chez Rust"})
        report("elicitation-refused", text=refused.content[0].text)


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        server = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(server) as (read, write):
            await scenario(read, write)
    elif mode == "http":
        async with streamablehttp_client(sys.argv[2]) as (read, write, _):
            await scenario(read, write)
    else:
        raise SystemExit(f"unknown mode {mode}")


asyncio.run(main())
