"""A client written with the Python SDK (`mcp` on PyPI) using a gateway whose servers' tools are
behind search (`"exposure": "search"`): search, describe, call (valid and invalid arguments),
and progressive disclosure (a described tool joins the session's list, told by
notifications/tools/list_changed).

`sdk_client_exposure.py stdio PROGRAM ARG...` spawns the gateway: one session.
`sdk_client_exposure.py http URL` connects two sessions at once: `a` searches and describes
while `b` stays connected; then `b` describes a tool of its own. Each session reports the
list changes it was told of, so the Rust test can check that each reached only its session.
Prints one JSON object per step on stdout: {"step", "session", ...}.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

# How long a session waits for a list change it expects, and lets pass for one it does not.
CHANGE_WAIT = 10.0
GRACE = 0.5


def report(step, session, **fields):
    print(json.dumps({"step": step, "session": session, **fields}), flush=True)


class Changes:
    """The tools/list_changed notifications one session was sent."""

    def __init__(self):
        self.count = 0
        self.event = asyncio.Event()

    async def handle(self, message):
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            self.count += 1
            self.event.set()

    async def wait(self):
        await asyncio.wait_for(self.event.wait(), CHANGE_WAIT)
        self.event.clear()

    async def settle(self):
        """Forgets the changes the gateway announced while its servers were starting (sent to
        every session): lets them arrive, then counts from zero."""
        await asyncio.sleep(GRACE)
        self.count = 0
        self.event.clear()


async def names(session):
    return [t.name for t in (await session.list_tools()).tools]


async def call(session, name, arguments):
    """A tool call: its result, or the JSON-RPC error."""
    try:
        result = await session.call_tool(name, arguments)
        return {
            "isError": result.isError,
            "text": result.content[0].text if result.content else "",
            "structured": result.structuredContent,
        }
    except McpError as error:
        return {"code": error.error.code, "message": error.error.message, "data": error.error.data}


async def searcher(label, session, changes):
    """Search, describe (and the list change it brings), call valid and invalid arguments."""
    report("listed", label, names=await names(session))
    await changes.settle()
    found = await call(session, "search_tools", {"query": "add two numbers", "server": "hidden"})
    report("searched", label, **found)
    described = await call(session, "describe_tool", {"name": "hidden__get-sum"})
    report("described", label, **described)
    await changes.wait()
    report("relisted", label, names=await names(session), changes=changes.count)
    summed = await call(session, "call_tool", {"name": "hidden__get-sum", "arguments": {"a": 2, "b": 3}})
    report("called", label, **summed)
    rejected = await call(
        session, "call_tool", {"name": "hidden__get-sum", "arguments": {"a": 2, "b": "three"}}
    )
    report("rejected", label, **rejected)
    direct = await call(session, "hidden__get-sum", {"a": 4, "b": 5})
    report("direct", label, **direct)


async def over_stdio(program, args):
    changes = Changes()
    params = StdioServerParameters(command=program, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=changes.handle) as session:
            await session.initialize()
            await searcher("a", session, changes)


async def over_http(url):
    a_changes, b_changes = Changes(), Changes()
    a_done = asyncio.Event()

    async def bystander():
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write, message_handler=b_changes.handle) as session:
                await session.initialize()
                report("listed", "b", names=await names(session))
                await b_changes.settle()
                await a_done.wait()
                # Time for a change meant for `a` to arrive here too, were it sent here.
                await asyncio.sleep(GRACE)
                report("after-a", "b", names=await names(session), changes=b_changes.count)
                described = await call(session, "describe_tool", {"name": "hidden__echo"})
                report("described", "b", **described)
                await b_changes.wait()
                report("relisted", "b", names=await names(session), changes=b_changes.count)

    async def searching():
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write, message_handler=a_changes.handle) as session:
                await session.initialize()
                await searcher("a", session, a_changes)
                a_done.set()
                await asyncio.sleep(GRACE)
                report("end", "a", names=await names(session), changes=a_changes.count)

    await asyncio.gather(bystander(), searching())


async def main():
    if sys.argv[1] == "stdio":
        await over_stdio(sys.argv[2], sys.argv[3:])
    else:
        await over_http(sys.argv[2])


asyncio.run(main())
