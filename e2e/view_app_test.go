package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The MCP App test: a host page built with the official
// @modelcontextprotocol/ext-apps host side (AppBridge over
// PostMessageTransport) loads polyrepl's view in a sandboxed frame, in
// chromium, while the official TypeScript SDK's client speaks to a real
// `polyrepl mcp` and passes the app's tool calls to it.

// appHostPage is the test host: the bridge, and the frame it puts the
// view in. Its modules are served from the browser modules directory
// by the script (page.route), named by an import map: no bundler.
const appHostPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>test host</title>
<script type="importmap">{"imports": {
  "@modelcontextprotocol/ext-apps/app-bridge": "/nm/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js",
  "@modelcontextprotocol/client": "/nm/@modelcontextprotocol/client/dist/index.mjs",
  "@modelcontextprotocol/client/_shims": "/nm/@modelcontextprotocol/client/dist/shimsBrowser.mjs",
  "@modelcontextprotocol/core": "/nm/@modelcontextprotocol/core/dist/index.mjs",
  "@modelcontextprotocol/core/internal": "/nm/@modelcontextprotocol/core/dist/internal.mjs",
  "zod": "/nm/zod/index.js",
  "zod/v4": "/nm/zod/v4/index.js",
  "zod/compile": "/nm/zod/compile.js",
  "pkce-challenge": "/nm/pkce-challenge/dist/index.browser.js",
  "eventsource": "/nm/eventsource/dist/index.js",
  "eventsource-parser": "/nm/eventsource-parser/dist/index.js",
  "eventsource-parser/stream": "/nm/eventsource-parser/dist/stream.js",
  "jose": "/nm/jose/dist/webapi/index.js"
}}</script>
</head><body><p>an MCP Apps host, for polyrepl's tests</p>
<script type="module">
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
window.host = { initialized: false, sizes: [] };
window.startApp = async (html) => {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.style.width = "900px";
  frame.style.height = "500px";
  document.body.appendChild(frame);
  const bridge = new AppBridge(null, { name: "polyrepl-test-host", version: "1.0.0" },
    { serverTools: {}, logging: {} }, { hostContext: { theme: "light", displayMode: "inline" } });
  bridge.oncalltool = (params) => window.hostCall(params);
  bridge.onsizechange = ({ width, height }) => {
    host.sizes.push({ width, height });
    if (height) frame.style.height = Math.min(height, 2000) + "px";
  };
  bridge.oninitialized = () => { host.initialized = true; };
  window.bridge = bridge;
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
};
window.hostReady = true;
</script></body></html>
`

// appScript is the Node side: the MCP client, the browser, the steps.
const appScript = `import { launch, input, result } from "./browser.mjs";
import { pathToFileURL } from "node:url";
import { join, resolve, sep } from "node:path";
import { readFileSync } from "node:fs";

const sdk = (p) => import(pathToFileURL(join(input.sdk, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = await sdk("client/stdio.js");

const out = { steps: [] };
const step = (s) => { out.steps.push(s); console.error("step:", s); };
const env = getDefaultEnvironment();
for (const kv of input.env) { const i = kv.indexOf("="); env[kv.slice(0, i)] = kv.slice(i + 1); }
const client = new Client({ name: "app-host-test", version: "1.0.0" },
  { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } });
await client.connect(new StdioClientTransport({ command: input.binary, args: ["mcp"], env, cwd: input.home, stderr: "inherit" }));
out.serverExtensions = client.getServerCapabilities()?.extensions ?? null;
const tools = (await client.listTools()).tools;
out.meta = Object.fromEntries(tools.map((t) => [t.name, t._meta ?? null]));
const res = await client.readResource({ uri: "ui://polyrepl/view" });
const html = res.contents[0].text;
out.resourceType = res.contents[0].mimeType;
step("listed and read");

const until = async (what, fn, ms = 60000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const v = await fn();
    if (v) return v;
  }
  throw new Error("timed out waiting for " + what);
};

const browser = await launch();
try {
  const page = await browser.newPage();
  page.on("console", (m) => console.error("page:", m.type(), m.text()));
  page.on("pageerror", (e) => console.error("page error:", e.message));
  const nm = resolve(input.modules);
  await page.route("http://host.test/**", async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === "/") return route.fulfill({ contentType: "text/html", body: readFileSync(new URL("./host.html", import.meta.url)) });
    const file = resolve(nm, decodeURIComponent(path.slice("/nm/".length)));
    if (!path.startsWith("/nm/") || !file.startsWith(nm + sep)) return route.fulfill({ status: 404, body: "" });
    try {
      return route.fulfill({ contentType: "text/javascript", body: readFileSync(file) });
    } catch {
      return route.fulfill({ status: 404, body: "" });
    }
  });
  out.calls = [];
  await page.exposeFunction("hostCall", async (params) => {
    out.calls.push(params.name);
    return await client.callTool(params, undefined, { timeout: 120000 });
  });
  await page.goto("http://host.test/");
  await page.waitForFunction(() => window.hostReady === true);
  await page.evaluate((html) => window.startApp(html), html);
  await page.waitForFunction(() => window.host.initialized, null, { timeout: 30000 });
  step("the app initialized");
  const frame = await until("the app's frame", () => page.frames().find((f) => f !== page.mainFrame()));
  await frame.waitForFunction(() => !!window.polyreplTransport);
  out.mode = await frame.evaluate(() => window.polyreplTransport.mode);
  out.theme = await frame.evaluate(() => document.documentElement.dataset.theme || "");
  out.can = await frame.evaluate(() => window.polyreplTransport.can);
  // The agent runs a cell that prints while it runs, in a session its
  // call creates; the host shows the app beside the call from its start,
  // as hosts do.
  const args = { session: "app", code: input.code, timeout: 0 };
  await page.evaluate((args) => window.bridge.sendToolInput({ arguments: args }), args);
  const ran = await client.callTool({ name: "exec", arguments: args });
  out.execStatus = ran.structuredContent?.status;
  await page.evaluate((ran) => window.bridge.sendToolResult(ran), ran);
  step("exec shown");

  const outputSeen = () => frame.evaluate(() => [...document.querySelectorAll("[data-seq] .output")].map((e) => e.textContent).join("\n"));
  out.shownOutput = await until("line 2 in the app", async () => { const t = await outputSeen(); return t.includes("line 2") ? t : ""; });
  const still = await client.callTool({ name: "wait", arguments: { session: "app", timeout: 0 } });
  out.statusWhenSeen = still.structuredContent?.status;
  out.shown = await frame.evaluate(() => document.querySelector("#name").textContent);
  step("output seen live");

  // The person interrupts from the app.
  await frame.click("button[data-action=interrupt]");
  await frame.waitForSelector("[data-seq][data-status=interrupted]", { timeout: 60000 });
  step("interrupted");

  if (input.figure) {
    // A figure reaches the app as a data: URL, shown as an image that
    // decoded.
    await client.callTool({ name: "exec", arguments: { session: "app", code: "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2]);" } });
    out.figure = await until("the figure in the app", () => frame.evaluate(() => {
      const img = document.querySelector("img.figure");
      return img && img.complete && img.naturalWidth > 0 ? { scheme: img.src.slice(0, 15), width: img.naturalWidth } : null;
    }));
    step("figure shown");
  }

  // A question the cell asks is answered from the app's form, as the
  // person.
  const asked = await client.callTool({ name: "exec", arguments: { session: "app", code: "x = input('name? ')\nprint('hello', x)", timeout: 5 } });
  out.askedStatus = asked.structuredContent?.status;
  await frame.waitForSelector("#question:not([hidden])", { timeout: 30000 });
  out.prompt = await frame.textContent("#prompt");
  await frame.fill("#answer", "ada");
  await frame.click("#question button[type=submit]");
  await frame.waitForSelector("#question[hidden]", { state: "attached", timeout: 30000 });
  out.said = await frame.textContent("#said");
  const answered = await client.callTool({ name: "wait", arguments: { session: "app", timeout: 60 } });
  out.answeredOutput = (answered.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  step("answered");
  out.sizes = await page.evaluate(() => window.host.sizes.length);
  await page.screenshot({ path: input.screenshot });
} finally {
  await browser.close();
  await client.close();
}
result(out);
`

// TestViewAsMCPApp: a client that declared the MCP Apps extension is
// told the server has it, finds exec linked to ui://polyrepl/view and
// reads the view there; the view, loaded by the official host bridge in
// a sandboxed frame, completes the handshake, follows the session the
// host shows, shows a cell's output while the cell still runs, and its
// interrupt stops the cell, as the record says; a figure comes to it as
// an image that decodes, and a cell's question is answered from it.
func TestViewAsMCPApp(t *testing.T) {
	needPython(t)
	b := needBrowser(t)
	sdk := os.Getenv("POLYREPL_TEST_MCP_SDK")
	if sdk == "" {
		t.Skip("needs the TypeScript MCP SDK: set POLYREPL_TEST_MCP_SDK to a node_modules holding @modelcontextprotocol/sdk (.ci/run does)")
	}
	t.Parallel()
	e := newEnv(t)
	e.setenv("POLYREPL_LABEL", "ada-person")
	figures := exec.Command(python, "-c", "import matplotlib").Run() == nil
	code := "import time\nfor i in range(40):\n    print('line', i, flush=True)\n    time.sleep(0.25)\ntime.sleep(120)"
	var got struct {
		Steps            []string                   `json:"steps"`
		ServerExtensions map[string]json.RawMessage `json:"serverExtensions"`
		Meta             map[string]json.RawMessage `json:"meta"`
		ResourceType     string                     `json:"resourceType"`
		Mode             string                     `json:"mode"`
		Theme            string                     `json:"theme"`
		Can              map[string]bool            `json:"can"`
		ExecStatus       string                     `json:"execStatus"`
		ShownOutput      string                     `json:"shownOutput"`
		StatusWhenSeen   string                     `json:"statusWhenSeen"`
		Shown            string                     `json:"shown"`
		Prompt           string                     `json:"prompt"`
		Said             string                     `json:"said"`
		Calls            []string                   `json:"calls"`
		Sizes            int                        `json:"sizes"`
		AskedStatus      string                     `json:"askedStatus"`
		AnsweredOutput   string                     `json:"answeredOutput"`
		Figure           *struct {
			Scheme string `json:"scheme"`
			Width  int    `json:"width"`
		} `json:"figure"`
	}
	b.run(t, browserRun{
		script: appScript,
		files:  map[string]string{"host.html": appHostPage},
		input: map[string]any{
			"sdk": sdk, "binary": e.bin, "env": e.vars, "home": e.home, "modules": b.modules,
			"code": code, "screenshot": filepath.Join(t.TempDir(), "app.png"),
			"figure": figures,
		},
		bound: 3 * time.Minute,
	}, &got)
	t.Logf("steps %v; calls through the host %d; the app's output when seen %q; sizes told %d", got.Steps, len(got.Calls), got.ShownOutput, got.Sizes)

	if _, ok := got.ServerExtensions["io.modelcontextprotocol/ui"]; !ok {
		t.Errorf("the server's capabilities lack the extension: %v", got.ServerExtensions)
	}
	if m := string(got.Meta["exec"]); m != `{"ui":{"resourceUri":"ui://polyrepl/view"}}` {
		t.Errorf("exec's _meta: %s", m)
	}
	if m := string(got.Meta["view_events"]); m != `{"ui":{"visibility":["app"]}}` {
		t.Errorf("view_events' _meta: %s", m)
	}
	if got.ResourceType != "text/html;profile=mcp-app" || got.Mode != "app" || got.Theme != "light" {
		t.Errorf("the resource's type %q, the transport's mode %q, the host's theme %q", got.ResourceType, got.Mode, got.Theme)
	}
	if !got.Can["interrupt"] || got.Can["exec"] || got.Can["kill"] {
		t.Errorf("the app offers %v", got.Can)
	}
	if got.ExecStatus != "running" || got.StatusWhenSeen != "running" {
		t.Errorf("the cell was %q when run and %q when the app showed its output: want it running", got.ExecStatus, got.StatusWhenSeen)
	}
	wantContains(t, "the output the app showed", got.ShownOutput, "line 0\n", "line 2\n")
	if got.Shown != "app" {
		t.Errorf("the app showed session %q, want the one the host's call named", got.Shown)
	}
	// The person's acts went through the app's own tool, never the
	// agent's (whose replies would take what the agent was not told yet).
	calls := strings.Join(got.Calls, " ")
	if !strings.Contains(calls, "view_events") || !strings.Contains(calls, "view_act") || strings.Contains(calls, "interrupt") || strings.Contains(calls, "input") {
		t.Errorf("the app's calls through the host: %v", got.Calls)
	}
	if figures && (got.Figure == nil || got.Figure.Scheme != "data:image/png;" || got.Figure.Width != 640) {
		t.Errorf("the figure in the app: %+v, want a 640 pixels wide PNG from a data: URL", got.Figure)
	}
	if got.AskedStatus != "input" || !strings.Contains(got.Prompt, "name?") || !strings.Contains(got.AnsweredOutput, "hello ada") {
		t.Errorf("a question answered from the app: asked %q, the form's prompt %q, then output %q (the app said %q)", got.AskedStatus, got.Prompt, got.AnsweredOutput, got.Said)
	}
	// Recorded as the person, through the view.
	hist, _ := e.must(0, "history", "app", "--json")
	if !strings.Contains(hist, `"who":"ada-person","how":"view"`) {
		t.Errorf("history does not show the app's answer as the person's through the view:\n%s", clip(hist))
	}
	if got.Sizes == 0 {
		t.Errorf("the app never told the host its size")
	}

	// The record says the cell was interrupted.
	stdout, stderr, code2 := e.run("history", "app", "--json")
	if code2 != 0 {
		t.Fatalf("polyrepl history: %d %s", code2, stderr)
	}
	var rec struct {
		Entries []struct {
			Code   string `json:"code"`
			Status string `json:"status"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
		t.Fatalf("history --json: %v: %s", err, clip(stdout))
	}
	found := false
	for _, en := range rec.Entries {
		if en.Code == code {
			found = true
			if en.Status != "interrupted" {
				t.Errorf("the cell's status in the record: %q, want interrupted", en.Status)
			}
		}
	}
	if !found {
		t.Errorf("the cell is not in the record: %s", clip(stdout))
	}
}
