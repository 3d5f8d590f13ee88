// ts-resources-only.mjs SDK_NODE_MODULES
//
// A stdio MCP server written with the TypeScript SDK's low-level Server, as
// many servers are: it declares the resources capability and implements
// resources/list and resources/read only, so it answers
// resources/templates/list (like every method it lacks) with JSON-RPC
// -32601 "Method not found". One resource, ts://only/readme (text/plain).
// The SDK is imported by file URL from SDK_NODE_MODULES (interop.TSSDK).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [nodeModules] = process.argv.slice(2);
if (!nodeModules) {
  console.error('usage: node ts-resources-only.mjs SDK_NODE_MODULES');
  process.exit(2);
}
const sdk = (p) => import(pathToFileURL(join(nodeModules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Server } = await sdk('server/index.js');
const { StdioServerTransport } = await sdk('server/stdio.js');
const { ListResourcesRequestSchema, ReadResourceRequestSchema } = await sdk('types.js');

const server = new Server({ name: 'ts-resources-only', version: '1.0.0' }, { capabilities: { resources: {} } });
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: 'ts://only/readme', name: 'readme', mimeType: 'text/plain' }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (req) => ({
  contents: [{ uri: req.params.uri, mimeType: 'text/plain', text: 'read from the TypeScript SDK' }],
}));
// Exit when the client closes stdin, as the spec's shutdown asks.
process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
