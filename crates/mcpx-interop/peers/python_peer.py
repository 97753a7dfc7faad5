"""An MCP server written with the Python SDK (`mcp` on PyPI), for mcpclient's interop tests.

`python_peer.py stdio` serves on stdin/stdout; `python_peer.py http` listens on 127.0.0.1
(an ephemeral port) and prints `listening 127.0.0.1:PORT` on stderr once it accepts.
"""

import asyncio
import socket
import sys

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel, Field

mcp = FastMCP("mcpx-python-peer", host="127.0.0.1")


class Sum(BaseModel):
    sum: int


@mcp.tool()
def add(a: int, b: int) -> Sum:
    """Adds two integers; the result is structured."""
    return Sum(sum=a + b)


@mcp.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress at each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


class Contact(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(description="Your age", ge=0)


@mcp.tool()
async def greet(ctx: Context, question: str = "Who are you?") -> str:
    """Asks the user `question` for a name and an age, and greets them."""
    answer = await ctx.elicit(message=question, schema=Contact)
    if answer.action == "accept":
        return f"hello {answer.data.name}, {answer.data.age}"
    return answer.action


@mcp.tool()
async def wait(seconds: float, ctx: Context) -> str:
    """Reports progress 0 at once, waits `seconds` (at most 30), and says so."""
    await ctx.report_progress(0, seconds, "waiting")
    await asyncio.sleep(min(seconds, 30))
    return f"waited {seconds}"


@mcp.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's LLM (sampling) to summarize `text`, and returns what it said."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=text))],
        max_tokens=50,
        related_request_id=ctx.request_id,
    )
    return result.content.text if isinstance(result.content, TextContent) else "not text"


@mcp.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one HTTP request header the client sent (empty over stdio)."""
    request = ctx.request_context.request
    return request.headers.get(name, "") if request is not None else ""


@mcp.resource("note://greeting")
def greeting() -> str:
    """A fixed note."""
    return "hi from python"


@mcp.prompt()
def review(code: str) -> str:
    """Asks for a review of `code`."""
    return f"Please review: {code}"


async def serve_http() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    host, port = listener.getsockname()
    print(f"listening {host}:{port}", file=sys.stderr, flush=True)
    config = uvicorn.Config(mcp.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[listener])


if __name__ == "__main__":
    if sys.argv[1:] == ["stdio"]:
        mcp.run("stdio")
    elif sys.argv[1:] == ["http"]:
        asyncio.run(serve_http())
    else:
        sys.exit("usage: python_peer.py stdio|http")
