// The agent's route, timed by the agent: the official TypeScript MCP
// SDK's Client over StdioClientTransport (its stripped environment plus
// the harness's world) running `exec 1+1` through `polyrepl mcp`, and, from
// the same Node process, a round trip over a unix socket to an echo
// server: the floor a client process pays for one hop.
//
//   node mcp_driver.mjs SDK_DIR POLYREPL_BINARY ECHO_SOCKET KEY=VALUE...
//
// One request per line on stdin ("mcp" or "echo"); one JSON line back per
// request: {"ok":true,"secs":S} or {"ok":false,"error":"..."}.
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { createConnection } from "node:net";
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";

const [sdkDir, binary, echoPath, ...pairs] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = await load("client/stdio.js");

const env = getDefaultEnvironment();
for (const kv of pairs) {
  const i = kv.indexOf("=");
  env[kv.slice(0, i)] = kv.slice(i + 1);
}
const client = new Client({ name: "polyrepl-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: binary, args: ["mcp"], env, stderr: "inherit" }));

const sock = createConnection(echoPath);
await new Promise((ok, fail) => { sock.once("connect", ok); sock.once("error", fail); });
sock.setNoDelay?.(true);
let waiting = null;
sock.on("data", () => { const w = waiting; waiting = null; w?.(); });
const echo = () => new Promise((ok) => { waiting = ok; sock.write("x"); });

const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
for await (const line of createInterface({ input: process.stdin })) {
  try {
    const t0 = performance.now();
    if (line === "mcp") {
      const r = await client.callTool({ name: "exec", arguments: { session: "mcpbench", code: "1+1" } });
      const secs = (performance.now() - t0) / 1000;
      const text = r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
      if (r.isError || !text.includes("2")) throw new Error("exec 1+1 said: " + text.slice(0, 200));
      say({ ok: true, secs });
    } else if (line === "echo") {
      await echo();
      say({ ok: true, secs: (performance.now() - t0) / 1000 });
    } else {
      throw new Error("unknown request " + line);
    }
  } catch (e) {
    say({ ok: false, error: String(e?.message ?? e) });
  }
}
sock.end();
await client.close();
