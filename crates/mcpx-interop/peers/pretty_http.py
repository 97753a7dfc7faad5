"""A minimal Streamable HTTP MCP server (Python standard library only) that indents every JSON
answer across lines, as an HTTP body may be; for the gateway's transport tests.

`pretty_http.py [PORT]` listens on 127.0.0.1 (PORT, else an ephemeral port) and prints
`listening 127.0.0.1:PORT` on stderr. With `PRETTY_SLOW_ACK=SECONDS` in its environment it holds
back its acknowledgement of every notification but `notifications/initialized` that long. One tool, `p`, answers with a result whose text and numbers must
reach the client unchanged; `numbers` answers with the arguments it received, as text.
"""

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOLS = [
    {"name": "p", "description": "An indented answer.", "inputSchema": {"type": "object"}},
    {"name": "slow", "description": "Answers after 3 s.", "inputSchema": {"type": "object"}},
    {
        "name": "numbers",
        "description": "Echoes the arguments' JSON text as received.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "number"}}},
    },
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_DELETE(self):
        self.do_GET()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        message = json.loads(body)
        if "id" not in message or "method" not in message:
            if message.get("method") != "notifications/initialized":
                time.sleep(float(os.environ.get("PRETTY_SLOW_ACK", "0")))
                print(f"acked {message.get('method')}", file=sys.stderr, flush=True)
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        method = message["method"]
        if method == "tools/call":
            print(f"call {message['params']['name']}", file=sys.stderr, flush=True)
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "pretty", "version": "0"},
            }
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call" and message["params"]["name"] == "p":
            result = {
                "content": [{"type": "text", "text": "line one\nline two"}],
                "structuredContent": {"big": 18446744073709551617},
            }
        elif method == "tools/call" and message["params"]["name"] == "slow":
            time.sleep(3)
            result = {"content": [{"type": "text", "text": "slow answer"}]}
        elif method == "tools/call" and message["params"]["name"] == "numbers":
            # The arguments' text exactly as it arrived (between the key and the next member).
            start = body.index('"arguments"')
            result = {"content": [{"type": "text", "text": body[start:]}]}
        else:
            result = {}
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}, indent=2)
        # Python's json turns 18446744073709551617 into an int and writes it back exactly.
        data = answer.encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            print("client gone before the answer", file=sys.stderr, flush=True)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    host, port = server.server_address
    print(f"listening {host}:{port}", file=sys.stderr, flush=True)
    server.serve_forever()
