// An MCP client written with the TypeScript SDK (`@modelcontextprotocol/sdk` on npm), driving
// `mcpx serve` for the gateway tests.
//
// `node ts_client.cjs NODE_MODULES stdio PROGRAM ARG...` spawns the gateway;
// `node ts_client.cjs NODE_MODULES http URL` connects to it. Prints one JSON object per step on
// stdout; the Rust test asserts them.

const { createRequire } = require("node:module");
const path = require("node:path");

const [nodeModules, mode, ...rest] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(nodeModules), "noop.js"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema, McpError } = sdk("@modelcontextprotocol/sdk/types.js");

function report(step, fields) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

const answers = [];

async function main() {
  const client = new Client(
    { name: "mcpx-ts-client", version: "0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async () => ({
    action: "accept",
    content: answers.shift(),
  }));
  const transport =
    mode === "stdio"
      ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(rest[0]));
  await client.connect(transport);
  report("initialize", {
    protocolVersion: transport.protocolVersion ?? null,
    server: client.getServerVersion().name,
  });

  const tools = await client.listTools();
  report("tools", { names: tools.tools.map((t) => t.name).sort() });

  const summed = await client.callTool({ name: "demo__get-sum", arguments: { a: 2, b: 3 } });
  report("demo-sum", { structured: summed.structuredContent, isError: summed.isError ?? false });

  const reference = await client.callTool({
    name: "everything__get-sum",
    arguments: { a: 20, b: 22 },
  });
  report("everything-sum", { text: reference.content[0].text, isError: reference.isError ?? false });

  try {
    await client.callTool({ name: "demo__get-sum", arguments: { a: 2, b: "three" } });
    report("rejected", { code: null });
  } catch (error) {
    report("rejected", { code: error.code ?? null, message: error.message, data: error.data ?? null });
  }

  const steps = [];
  const counted = await client.callTool(
    // The server pauses between its progress and its answer: the SDK drops progress handlers
    // when the answer arrives, and steps read together with it would be lost on its side.
    { name: "demo__count", arguments: { steps: 3, pauseMs: 200 } },
    undefined,
    { onprogress: (p) => steps.push(p.progress) },
  );
  report("progress", { steps, text: counted.content[0].text });

  answers.push({ party: 4, time: "19:00" });
  const booked = await client.callTool({
    name: "demo__book-table",
    arguments: { restaurant: "Chez Rust" },
  });
  report("elicited", { text: booked.content[0].text });

  answers.push({ party: 40, time: "19:00" }); // over the maximum of 12
  const refused = await client.callTool({
    name: "demo__book-table",
    arguments: { restaurant: "Chez Rust" },
  });
  report("elicitation-refused", { text: refused.content[0].text });

  await client.close();
}

main().catch((error) => {
  process.stderr.write(`ts_client: ${error.stack ?? error}\n`);
  process.exit(1);
});
