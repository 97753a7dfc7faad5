// MCP TypeScript SDK v2 (@modelcontextprotocol/client 2.4.0) peer client.
//
//   node client.mjs [--mode auto|pin|legacy] [--log-level LEVEL] [--tools a,b] (--url URL | -- COMMAND ARGS...)
//
// --mode auto (default): versionNegotiation {mode:'auto'} (server/discover probe, initialize fallback);
// --mode pin: {mode:{pin:'2026-07-28'}}; --mode legacy: the SDK default (plain initialize).
// Then: server/discover (when modern), tools/list, tools/call for each tool. Elicitation answers
// from the requested schema (name -> "Ada", color -> "teal"), sampling answers "Paris.".
// --log-level puts io.modelcontextprotocol/logLevel into each tools/call _meta (the SDK has no knob).
import { Client, StreamableHTTPClientTransport, LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const modeArg = opt('--mode', 'auto');
const url = opt('--url');
const logLevel = opt('--log-level');
const tools = opt('--tools', 'echo,ask_name,sample_capital').split(',').filter(Boolean);
const cmd = argv.includes('--') ? argv.slice(argv.indexOf('--') + 1) : [];
const out = (step, result) => process.stdout.write(JSON.stringify({ step, result }) + '\n');
const ANSWERS = { name: 'Ada', color: 'teal' };

const versionNegotiation =
    modeArg === 'legacy' ? { mode: 'legacy' } : modeArg === 'pin' ? { mode: { pin: '2026-07-28' } } : { mode: 'auto' };
const client = new Client(
    { name: 'ts-sdk26-client', version: '2.4.0' },
    { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation }
);
client.setRequestHandler('elicitation/create', async request => {
    const props = request.params.requestedSchema?.properties ?? {};
    const content = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, ANSWERS[k] ?? (['integer', 'number'].includes(v.type) ? 42 : 'x')]));
    process.stderr.write(JSON.stringify({ elicitation: request.params.message, answer: content }) + '\n');
    return { action: 'accept', content };
});
client.setNotificationHandler('notifications/message', n => process.stderr.write(JSON.stringify({ log: n.params }) + '\n'));
client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'Paris.' },
    model: 'fake-model',
    stopReason: 'endTurn'
}));

const transport = url
    ? new StreamableHTTPClientTransport(new URL(url))
    : new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: 'inherit' });

let code = 0;
try {
    await client.connect(transport, { timeout: 20000 });
    out('connected', {
        protocolVersion: client.getNegotiatedProtocolVersion(),
        era: client.getProtocolEra(),
        serverInfo: client.getServerVersion()
    });
    if (client.getProtocolEra() === 'modern') out('server/discover', await client.discover());
    out('tools/list', await client.listTools());
    for (const name of tools) {
        const params = { name, arguments: name === 'echo' ? { text: 'hi' } : {} };
        if (logLevel) params._meta = { [LOG_LEVEL_META_KEY]: logLevel };
        try {
            const onprogress = p => process.stderr.write(JSON.stringify({ progress: p }) + '\n');
            out(`tools/call ${name}`, await client.callTool(params, { onprogress }));
        } catch (err) {
            out(`tools/call ${name} ERROR`, { name: err?.name, code: err?.code, message: err?.message, data: err?.data });
        }
    }
} catch (err) {
    out('ERROR', { name: err?.name, code: err?.code, message: err?.message, data: err?.data });
    code = 1;
} finally {
    await client.close().catch(() => {});
}
process.exit(code);
