// An MCP client nobody in polyrepl wrote: the official TypeScript SDK's
// Client over StdioClientTransport, with the SDK's default (stripped)
// environment plus what the test names. It runs one cell that draws a
// figure and prints what it got as one JSON line.
//
//   node plot.mjs SDK_DIR POLYREPL_BINARY KEY=VALUE...
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, binary, ...pairs] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = await load("client/stdio.js");

const env = getDefaultEnvironment();
for (const kv of pairs) {
  const i = kv.indexOf("=");
  env[kv.slice(0, i)] = kv.slice(i + 1);
}
const transport = new StdioClientTransport({ command: binary, args: ["mcp"], env, stderr: "inherit" });
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);
const res = await client.callTool({
  name: "exec",
  arguments: { session: "tsplot", code: "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3]);" },
});
const images = res.content.filter((c) => c.type === "image").map((c) => {
  const b = Buffer.from(c.data, "base64");
  const png = b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  return { mimeType: c.mimeType, png, width: png ? b.readUInt32BE(16) : 0, height: png ? b.readUInt32BE(20) : 0 };
});
const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
console.log(JSON.stringify({ isError: !!res.isError, images, rich: res.structuredContent?.rich ?? null, text }));
await client.close();
