"""MCP Python SDK (mcp==2.3.0) peer client.

    client.py [--mode auto|2026-07-28|legacy] [--log-level LEVEL] (--url URL | -- COMMAND ARGS...)

Connects (mode auto = server/discover probe then initialize fallback; 2026-07-28 =
adopt that version with no probe; legacy = initialize), then: server/discover (only
when modern), tools/list, tools/call echo / ask_name / ask_color / sample_capital.
Elicitation answers from the requested schema (name -> "Ada", color -> "teal");
sampling answers "Paris.". Prints one JSON line per step on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

ANSWERS = {"name": "Ada", "color": "teal"}


async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties") or {}
    content = {k: ANSWERS.get(k, 42 if v.get("type") in ("integer", "number") else "x") for k, v in props.items()}
    print(json.dumps({"elicitation": params.message, "answer": content}), file=sys.stderr, flush=True)
    return types.ElicitResult(action="accept", content=content)


async def on_sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="Paris."), model="fake-model", stop_reason="endTurn"
    )


def out(step: str, value: Any) -> None:
    if hasattr(value, "model_dump"):
        value = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    print(json.dumps({"step": step, "result": value}), flush=True)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--url")
    parser.add_argument("--log-level", default=None)
    parser.add_argument("--tools", default="echo,ask_name,ask_color,sample_capital")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    server: Any = args.url if args.url else StdioServerParameters(command=args.command[0], args=args.command[1:])
    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        print(json.dumps({"log": params.model_dump(mode="json", exclude_none=True)}), file=sys.stderr, flush=True)

    client = Client(
        server,
        logging_callback=on_log,
        mode=args.mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        client_info=types.Implementation(name="py-sdk26-client", version="2.3.0"),
        log_level=args.log_level,
        read_timeout_seconds=20,
    )
    try:
        async with client:
            out("connected", {"protocolVersion": client.protocol_version,
                              "serverInfo": client.server_info.model_dump(mode="json") if client.server_info else None})
            if client.session.discover_result is not None and args.mode == "auto":
                out("server/discover (result of the connect-time probe)", client.session.discover_result)
            out("tools/list", await client.list_tools())
            for tool in [t for t in args.tools.split(",") if t]:
                arguments = {"text": "hi"} if tool == "echo" else {}
                try:
                    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                        print(json.dumps({"progress": progress, "total": total, "message": message}), file=sys.stderr, flush=True)

                    out(f"tools/call {tool}", await client.call_tool(tool, arguments, progress_callback=on_progress))
                except MCPError as exc:
                    out(f"tools/call {tool} ERROR", {"code": exc.code, "message": str(exc), "data": exc.error.data})
    except MCPError as exc:
        out("ERROR", {"code": exc.code, "message": str(exc), "data": exc.error.data})
        return 1
    except Exception as exc:  # surface transport-level failures too, unwrapping task-group exception groups
        leaves = [exc]
        while any(isinstance(e, BaseExceptionGroup) for e in leaves):
            leaves = [x for e in leaves for x in (e.exceptions if isinstance(e, BaseExceptionGroup) else [e])]
        for e in leaves:
            detail = {"type": type(e).__name__, "message": str(e)}
            if isinstance(e, MCPError):
                detail.update(code=e.code, data=e.error.data)
            out("EXCEPTION", detail)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
