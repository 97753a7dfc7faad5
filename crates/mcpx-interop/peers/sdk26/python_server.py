"""MCP Python SDK (mcp==2.3.0) peer server speaking 2026-07-28 (and, by default, 2025-era too).

    server.py [--http PORT] [--modern-only | --legacy-only]

stdio by default; --http PORT serves Streamable HTTP on 127.0.0.1:PORT/mcp.
The SDK is dual-era with no version-list knob (MODERN_PROTOCOL_VERSIONS is a module
constant), so:
  stdio --modern-only / --legacy-only drive the SDK's own per-era loops directly
        (mcp.server.runner._serve_modern_stream / _serve_legacy_stream, private API);
  HTTP  --modern-only wraps the ASGI app: no MCP-Protocol-Version header, or a 2025
        one, gets 400 + -32022 (the SDK itself routes such requests to the legacy transport).
  HTTP  --legacy-only is not offered (use old/python_peer.py, mcp 1.30.0).

Tools:
  echo(text)        plain tool
  ask_name()        hand-rolled MRTR: returns InputRequiredResult (elicitation/create) +
                    requestState; reads ctx.input_responses / ctx.request_state on retry
  ask_color(...)    the same through the SDK's Resolve(Elicit) dependency (works on both eras)
  sample_capital()  sampling via Resolve(Sample)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Annotated, Any

import anyio

from mcp_types import (
    UNSUPPORTED_PROTOCOL_VERSION,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample

class Color(BaseModel):
    color: str

async def favourite_color() -> Elicit[Color]:
    return Elicit("What is your favourite colour?", Color)


async def capital() -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text="What is the capital of France?"))],
        max_tokens=50,
    )


def build() -> MCPServer:
    mcp = MCPServer("py-sdk26-peer", version="2.3.0", instructions="mcpx interop peer (python mcp 2.3.0)")

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @mcp.tool()
    async def ask_name(ctx: Context) -> str | InputRequiredResult:
        """Ask the user for their name (hand-rolled multi round-trip request)."""
        responses = ctx.input_responses or {}
        answer = responses.get("user_name")
        if answer is not None:
            data = answer if isinstance(answer, dict) else answer.model_dump(by_alias=True, exclude_none=True)
            if data.get("action") == "accept":
                return f"Hello, {data.get('content', {}).get('name')}! (state was {ctx.request_state!r})"
            return f"no name given ({data.get('action')})"
        return InputRequiredResult(
            input_requests={
                "user_name": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message="What is your name?",
                        requested_schema={
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    )
                )
            },
            request_state=json.dumps({"round": 1, "tool": "ask_name"}),
        )

    @mcp.tool()
    async def ask_color(color: Annotated[Color, Resolve(favourite_color)]) -> str:
        """Ask the user for a colour (SDK Resolve/Elicit dependency)."""
        return f"You like {color.color}."

    @mcp.tool()
    async def sample_capital(answer: Annotated[CreateMessageResult, Resolve(capital)]) -> str:
        """Ask the client's LLM a question (SDK Resolve/Sample dependency)."""
        content = answer.content
        text = content.text if isinstance(content, TextContent) else str(content)
        return f"The model said: {text}"

    @mcp.tool()
    async def log_progress(ctx: Context) -> str:
        """Emits a log notification (if the request opted in via logLevel) and a progress notification."""
        await ctx.info("log_progress says hi")
        await ctx.report_progress(1, 2, "half way")
        return "done"

    return mcp


async def serve_stdio_one_era(mcp: MCPServer, era: str) -> None:
    """Serve stdio in one era only, with the SDK's own per-era loops (private API, mcp 2.3.0).

    `MCPServer.run("stdio")` uses `serve_dual_era_loop`, which picks the era from the first
    request; these are the two loops it dispatches to.
    """
    from mcp.server.runner import _serve_legacy_stream, _serve_modern_stream  # private in 2.3.0
    from mcp.server.stdio import stdio_server

    low = mcp._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        async with low.lifespan(low) as state:
            try:
                if era == "modern":
                    await _serve_modern_stream(low, read_stream, write_stream, lifespan_state=state, raise_exceptions=False)
                else:
                    await _serve_legacy_stream(
                        low, read_stream, write_stream, lifespan_state=state, session_id=None,
                        init_options=low.create_initialization_options(), raise_exceptions=False,
                    )
            finally:
                await write_stream.aclose()


def modern_only_asgi(app: Any) -> Any:
    """HTTP 2026-only: the SDK routes on the MCP-Protocol-Version header alone (absent or a
    handshake-era value -> legacy transport), so refuse those up front with 400 + -32022."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            pv = headers.get("mcp-protocol-version")
            if pv is None or pv in HANDSHAKE_PROTOCOL_VERSIONS:
                body = {"jsonrpc": "2.0", "id": None, "error": {
                    "code": UNSUPPORTED_PROTOCOL_VERSION, "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], **({"requested": pv} if pv else {})}}}
                payload = json.dumps(body).encode()
                await send({"type": "http.response.start", "status": 400,
                            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
                await send({"type": "http.response.body", "body": payload})
                return
        await app(scope, receive, send)

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--modern-only", action="store_true")
    group.add_argument("--legacy-only", action="store_true")
    parser.add_argument("--json-response", action="store_true", help="HTTP: JSON bodies instead of SSE")
    parser.add_argument("--stateless", action="store_true", help="HTTP: stateless_http=True for the 2025 era")
    args = parser.parse_args()
    mode = "modern-only" if args.modern_only else "legacy-only" if args.legacy_only else "dual"
    mcp = build()
    if args.http is None:
        if mode == "dual":
            mcp.run("stdio")
        else:
            anyio.run(serve_stdio_one_era, mcp, "modern" if mode == "modern-only" else "legacy")
        return
    if mode == "legacy-only":
        sys.exit("--legacy-only is stdio only; use old/python_peer.py (mcp 1.30.0) for a 2025-only HTTP server")
    import uvicorn

    app = mcp.streamable_http_app(json_response=args.json_response, stateless_http=args.stateless, host="127.0.0.1")
    if mode == "modern-only":
        app = modern_only_asgi(app)
    # The socket is bound and listening before the line that says so (port 0: the system's pick).
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.http))
    sock.listen(128)
    print(f"py server ({mode}) listening 127.0.0.1:{sock.getsockname()[1]}", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


if __name__ == "__main__":
    main()
