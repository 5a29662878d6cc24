// One MCP client for the peers section: the official TypeScript SDK's
// Client over StdioClientTransport, connected to one server at a time and
// driven by the harness one request per line, so that every server is
// reached the way an agent's client reaches it and timed the same way.
//
//   node peers_driver.mjs SDK_DIR
//
// Requests on stdin, one JSON object a line; one JSON line back for each:
//   {"op":"connect","command":C,"args":[...],"env":{K:V},"cwd":D}
//       the server is started with the SDK's default environment (HOME,
//       LOGNAME, PATH, SHELL, TERM, USER) overlaid with env;
//       back: {"ok":true,"secs":S,"tools":[...],"instructions":I,"server":{...}}
//   {"op":"call","name":N,"arguments":{...},"timeout_ms":T}
//       back: {"ok":true,"secs":S,"result":{content,structuredContent,isError}}
//       or {"ok":false,"secs":S,"error":E} (a timeout, a protocol error)
//   {"op":"dc-config","module":M,"file":F,"set":{...}}
//       writes desktop-commander's own default configuration (M is its
//       config-manager.js) with set over it to F, before it first runs
//   {"op":"close"}
// secs is measured here, around the SDK's call. Every answer also says
// how many messages from the server the client could not read so far
// (protocol_errors, last_protocol_error).
import { pathToFileURL } from "node:url";
import { join, dirname } from "node:path";
import { mkdir, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { performance } from "node:perf_hooks";

const [sdkDir] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(sdkDir, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = await load("client/stdio.js");

let client = null;
let stderr = "";
// What the client could not read on the server's stdout (a line that is
// not JSON-RPC): counted, and the last kept, for the row's notes.
let protocolErrors = 0;
let lastProtocolError = "";
const say = (o) => process.stdout.write(JSON.stringify({ ...o, protocol_errors: protocolErrors, last_protocol_error: lastProtocolError }) + "\n");

async function connect(req) {
  const env = { ...getDefaultEnvironment(), ...(req.env ?? {}) };
  const transport = new StdioClientTransport({ command: req.command, args: req.args ?? [], env, cwd: req.cwd, stderr: "pipe" });
  // What the server says on stderr is kept (bounded) for an error message.
  transport.stderr?.on("data", (b) => { stderr = (stderr + b.toString()).slice(-4000); });
  client = new Client({ name: "polyrepl-bench-peers", version: "1.0.0" });
  client.onerror = (e) => { protocolErrors++; lastProtocolError = String(e?.message ?? e).slice(0, 300); };
  const t0 = performance.now();
  await client.connect(transport);
  const tools = await client.listTools();
  return {
    ok: true, secs: (performance.now() - t0) / 1000, tools: tools.tools,
    instructions: client.getInstructions() ?? "", server: client.getServerVersion() ?? {},
  };
}

async function call(req) {
  const t0 = performance.now();
  try {
    const opts = req.timeout_ms ? { timeout: req.timeout_ms } : undefined;
    const r = await client.callTool({ name: req.name, arguments: req.arguments ?? {} }, undefined, opts);
    return { ok: true, secs: (performance.now() - t0) / 1000, result: r };
  } catch (e) {
    return { ok: false, secs: (performance.now() - t0) / 1000, error: String(e?.message ?? e) + (stderr ? "; its stderr: " + stderr.slice(-500) : "") };
  }
}

async function dcConfig(req) {
  const { configManager } = await import(pathToFileURL(req.module).href);
  const cfg = { ...configManager.getDefaultConfig(), ...(req.set ?? {}) };
  await mkdir(dirname(req.file), { recursive: true });
  await writeFile(req.file, JSON.stringify(cfg, null, 2));
  return { ok: true };
}

for await (const line of createInterface({ input: process.stdin })) {
  let req;
  try {
    req = JSON.parse(line);
    if (req.op === "connect") say(await connect(req));
    else if (req.op === "call") say(await call(req));
    else if (req.op === "dc-config") say(await dcConfig(req));
    else if (req.op === "close") { await client?.close(); client = null; say({ ok: true }); }
    else throw new Error("unknown op " + req.op);
  } catch (e) {
    say({ ok: false, error: String(e?.message ?? e) + (stderr ? "; its stderr: " + stderr.slice(-500) : "") });
  }
}
await client?.close();
