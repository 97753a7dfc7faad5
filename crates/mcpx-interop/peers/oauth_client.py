"""An MCP client written with the Python SDK (`mcp` on PyPI) that logs in with OAuth to
`mcpx serve --http` acting as a resource server, for the gateway's OAuth tests.

`oauth_client.py MCP_URL ISSUER CLIENT_ID CLIENT_SECRET SCOPES`

First, without the SDK, what mcpx answers to no token and to a bad one (status and
`WWW-Authenticate`) and its Protected Resource Metadata; then the SDK's own OAuth support
(`ClientCredentialsOAuthProvider`): on mcpx's 401 it reads the metadata, discovers the issuer,
gets a client-credentials token for mcpx's resource indicator, and lists and calls tools; last,
the SDK with a bad token of its own, which must be refused. Prints one JSON object per step on
stdout; the Rust test asserts them.
"""

import asyncio
import json
import re
import sys

import httpx
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamablehttp_client

# How long the SDK may take to be refused (a client that hangs fails the test).
REFUSAL_WAIT = 20

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "oauth-probe", "version": "0"}},
}


def report(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


class MemoryStorage:
    """Tokens kept for this run only."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def probe(http, url, authorization):
    headers = {"accept": "application/json, text/event-stream"}
    if authorization:
        headers["authorization"] = authorization
    answer = await http.post(url, json=INITIALIZE, headers=headers)
    return answer.status_code, answer.headers.get("www-authenticate", "")


async def main():
    url, issuer, client_id, client_secret, scopes = sys.argv[1:6]
    async with httpx.AsyncClient() as http:
        status, challenge = await probe(http, url, None)
        report("no-token", status=status, challenge=challenge)
        status, bad_challenge = await probe(http, url, "Bearer not-a-jwt")
        report("bad-token", status=status, challenge=bad_challenge)
        found = re.search(r'resource_metadata="([^"]+)"', challenge)
        metadata = (await http.get(found.group(1))).json() if found else None
        report("metadata", url=found.group(1) if found else None, document=metadata)

    provider = ClientCredentialsOAuthProvider(
        server_url=url, storage=MemoryStorage(), client_id=client_id,
        client_secret=client_secret, scopes=scopes, issuer=issuer,
    )
    async with streamablehttp_client(url, auth=provider) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report("initialize", server=init.serverInfo.name)
            tools = await session.list_tools()
            report("tools", names=sorted(t.name for t in tools.tools))
            summed = await session.call_tool("demo__get-sum", {"a": 2, "b": 3})
            report("demo-sum", structured=summed.structuredContent, isError=summed.isError)

    async def with_bad_token():
        headers = {"Authorization": "Bearer not-a-jwt"}
        async with streamablehttp_client(url, headers=headers) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()

    try:
        await asyncio.wait_for(with_bad_token(), REFUSAL_WAIT)
        report("sdk-bad-token", refused=False, error="")
    except asyncio.TimeoutError:
        report("sdk-bad-token", refused=False, error="timed out")
    except BaseException as error:  # the SDK raises from a task group: an ExceptionGroup
        report("sdk-bad-token", refused=True, error=repr(error))


asyncio.run(main())
