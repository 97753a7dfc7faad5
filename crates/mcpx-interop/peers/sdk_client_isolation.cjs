// A client written with the TypeScript SDK (`@modelcontextprotocol/sdk` on npm) that checks that a
// gateway's sessions never mix: it asks many questions at once and says who answered each.
//
// `node sdk_client_isolation.cjs NODE_MODULES URL NAME CALLS PREFIX` connects to URL over
// Streamable HTTP as NAME, declaring elicitation and sampling, and calls PREFIX`greet` (the server
// elicits) and PREFIX`summarize` (the server samples) CALLS times each, all at once. Every
// question is answered with NAME and the question's own text, so an answer that reaches another
// caller shows who answered it. Prints one JSON object on stdout: the questions this client was
// asked and every call's result; the Rust test asserts it.

const { createRequire } = require("node:module");
const path = require("node:path");

// At most this many calls per tool (the test's load stays bounded).
const MAX_CALLS = 50;

const [nodeModules, url, name, callsText, prefix] = process.argv.slice(2);
const sdk = createRequire(path.join(path.resolve(nodeModules), "noop.js"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema, CreateMessageRequestSchema } = sdk("@modelcontextprotocol/sdk/types.js");

async function main() {
  const calls = Number(callsText);
  if (!(Number.isInteger(calls) && calls > 0 && calls <= MAX_CALLS)) {
    throw new Error(`CALLS must be 1..${MAX_CALLS}`);
  }
  const asked = [];
  const client = new Client(
    { name, version: "0" },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const question = request.params.message;
    asked.push({ kind: "elicitation", text: question });
    return { action: "accept", content: { name: `${name} answering ${question}`, age: 7 } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    const content = request.params.messages[0].content;
    const text = content.type === "text" ? content.text : "";
    asked.push({ kind: "sampling", text });
    return {
      role: "assistant",
      model: "scripted",
      stopReason: "endTurn",
      content: { type: "text", text: `summary by ${name} of ${text}` },
    };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();

  const call = async (tool, question, args) => {
    try {
      const result = await client.callTool({ name: prefix + tool, arguments: args });
      const text = result.content?.[0]?.text ?? "";
      return { tool, question, text, isError: result.isError ?? false };
    } catch (error) {
      return { tool, question, error: String(error.message ?? error) };
    }
  };
  const greetings = [];
  const summaries = [];
  for (let i = 0; i < calls; i++) {
    const question = `${name} question ${i}`;
    greetings.push(call("greet", question, { question }));
    const text = `${name} text ${i}`;
    summaries.push(call("summarize", text, { text }));
  }
  const results = await Promise.all([...greetings, ...summaries]);
  await client.close();
  process.stdout.write(JSON.stringify({ client: name, asked, results }) + "\n");
}

main().catch((error) => {
  process.stderr.write(`sdk_client_isolation: ${error.stack ?? error}\n`);
  process.exit(1);
});
