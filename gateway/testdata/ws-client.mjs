// ws-client.mjs URL SDK_NODE_MODULES
//
// Connects to an MCP server over WebSocket with the TypeScript SDK's own
// WebSocketClientTransport (subprotocol "mcp"), lists the tools, calls
// mcp_fx_echo and prints one JSON object: {server, tools, echo}. The SDK is
// imported by file URL from SDK_NODE_MODULES (interop.TSSDK), since this
// script lives outside that node_modules folder.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, nodeModules] = process.argv.slice(2);
if (!url || !nodeModules) {
  console.error('usage: node ws-client.mjs URL SDK_NODE_MODULES');
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { WebSocketClientTransport } = await sdk('client/websocket.js');

const client = new Client({ name: 'switchboard-ts-ws-test', version: '1.0.0' });
await client.connect(new WebSocketClientTransport(new URL(url)));
const { tools } = await client.listTools();
const echo = await client.callTool({ name: 'mcp_fx_echo', arguments: { text: 'hi over ws' } });
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.map((t) => t.name),
  echo,
}));
await client.close();
