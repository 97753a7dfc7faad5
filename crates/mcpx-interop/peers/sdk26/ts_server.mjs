// MCP TypeScript SDK v2 (@modelcontextprotocol/server 2.4.0) peer server.
//
//   node server.mjs [--http PORT] [--modern-only | --legacy-only]
//
// stdio (serveStdio) by default; --http PORT serves createMcpHandler on 127.0.0.1:PORT/mcp
// via @modelcontextprotocol/node's toNodeHandler.
//   default        dual-era: 2026-07-28 + 2025-era (stdio: serveStdio legacy:'serve';
//                  HTTP: createMcpHandler legacy:'stateless')
//   --modern-only  serveStdio/createMcpHandler with legacy:'reject'
//   --legacy-only  the classic 2025 wiring: McpServer.connect(new StdioServerTransport())
//                  on stdio, NodeStreamableHTTPServerTransport (sessionful) on HTTP
//
// Tools: echo(text) plain; ask_name MRTR elicitation via inputRequired();
//        sample_capital MRTR sampling via inputRequired.createMessage().
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { McpServer, inputRequired, acceptedContent, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler, NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';

const argv = process.argv.slice(2);
const httpPort = argv.includes('--http') ? Number(argv[argv.indexOf('--http') + 1]) : undefined;
const mode = argv.includes('--modern-only') ? 'modern-only' : argv.includes('--legacy-only') ? 'legacy-only' : 'dual';

function factory(ctx) {
    const server = new McpServer(
        { name: 'ts-sdk26-peer', version: '2.4.0' },
        { capabilities: { tools: {}, logging: {} }, instructions: `mcpx interop peer (ts sdk 2.4.0, ${ctx?.era ?? 'classic'} instance)` }
    );
    server.registerTool('echo', { description: 'Echo the text back.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
        content: [{ type: 'text', text }]
    }));
    const nameSchema = z.object({ name: z.string() });
    server.registerTool('ask_name', { description: 'Ask the user for their name (MRTR elicitation).' }, async ctx => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', nameSchema);
        if (!answer) {
            return inputRequired({
                inputRequests: { user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) },
                requestState: JSON.stringify({ round: 1, tool: 'ask_name' })
            });
        }
        return { content: [{ type: 'text', text: `Hello, ${answer.name}! (state was ${ctx.mcpReq.requestState()})` }] };
    });
    server.registerTool('sample_capital', { description: "Ask the client's LLM a question (MRTR sampling)." }, async ctx => {
        const sampled = ctx.mcpReq.inputResponses?.capital;
        if (!sampled) {
            return inputRequired({
                inputRequests: {
                    capital: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
                        maxTokens: 50
                    })
                }
            });
        }
        return { content: [{ type: 'text', text: `The model said: ${sampled.content?.text}` }] };
    });
    server.registerTool('log_progress', { description: 'Emits a log notification (if the request opted in via logLevel) and a progress notification (if it carried a progressToken), then returns.' }, async ctx => {
        await ctx.mcpReq.log('info', 'log_progress says hi');
        const token = ctx.mcpReq._meta?.progressToken;
        if (token !== undefined) {
            await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'half way' } });
        }
        return { content: [{ type: 'text', text: 'done' }] };
    });
    return server;
}

const onerror = err => process.stderr.write(`[ts-server] ${err?.stack ?? err}\n`);

if (httpPort === undefined) {
    if (mode === 'legacy-only') {
        await factory(undefined).connect(new StdioServerTransport());
    } else {
        serveStdio(factory, { legacy: mode === 'modern-only' ? 'reject' : 'serve', onerror });
    }
} else {
    let nodeHandler;
    if (mode === 'legacy-only') {
        const sessions = new Map();
        nodeHandler = async (req, res) => {
            const sid = req.headers['mcp-session-id'];
            let transport = sid && sessions.get(sid);
            if (!transport) {
                transport = new NodeStreamableHTTPServerTransport({
                    sessionIdGenerator: () => randomUUID(),
                    onsessioninitialized: id => sessions.set(id, transport)
                });
                await factory(undefined).connect(transport);
            }
            await transport.handleRequest(req, res);
        };
    } else {
        const handler = createMcpHandler(factory, { legacy: mode === 'modern-only' ? 'reject' : 'stateless', onerror });
        nodeHandler = toNodeHandler(handler);
    }
    const server = http.createServer((req, res) => {
        if (!req.url.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        Promise.resolve(nodeHandler(req, res)).catch(onerror);
    });
    server.listen(httpPort, '127.0.0.1', () => process.stderr.write(`ts server (${mode}) listening 127.0.0.1:${server.address().port}\n`));
}
