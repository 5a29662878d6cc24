// polyrepl's view as an MCP App: window.polyreplTransport (the contract
// is at the top of view.js) over the MCP Apps postMessage protocol. The
// page lives in a host's sandboxed frame and reaches polyrepl only
// through the host: JSON-RPC 2.0 messages to window.parent, the
// ui/initialize handshake first, then tools/call of the server's tools,
// which the host passes to `polyrepl mcp`. The host says which session
// it shows by the tool calls it renders the app beside (exec, wait,
// sessions: their arguments and results); the app follows that session
// with view_events, a long poll, glances at its state with view_glance,
// and interrupts and answers it with view_act, as the person (the
// agent's own interrupt and input tools would record it as the agent's,
// and take the activity the agent has not been told). Running cells, restarting, killing,
// exporting and other sessions are left to the agent, and to a person
// at `polyrepl view`.
"use strict";
(function () {
  const PROTOCOL = "2026-01-26"; // the MCP Apps version this speaks
  const host = window.parent;
  let nextID = 1;
  const waiting = new Map(); // request id -> {resolve, reject}
  let ready; // resolves once the handshake is done
  const sessionFns = [];
  let shown = ""; // the session the host showed last
  let lastSize = "";

  function post(msg) {
    host.postMessage(Object.assign({ jsonrpc: "2.0" }, msg), "*");
  }

  // request sends a request to the host; the promise settles with its
  // reply.
  function request(method, params) {
    const id = nextID++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      post({ id, method, params });
    });
  }

  function notify(method, params) {
    post({ method, params: params || {} });
  }

  // A session the host shows: the arguments of a tool call, or its
  // result's structured content.
  function showSession(name) {
    if (typeof name !== "string" || name === "" || name === shown) return;
    shown = name;
    for (const fn of sessionFns) fn(name);
  }

  function sessionOfResult(res) {
    const sc = res && res.structuredContent;
    if (!sc) return "";
    if (typeof sc.session === "string") return sc.session;
    if (Array.isArray(sc.sessions) && sc.sessions.length === 1) return sc.sessions[0].name;
    return "";
  }

  // The host's theme, for the page's style: <html data-theme="dark">.
  function hostContext(ctx) {
    if (ctx && (ctx.theme === "light" || ctx.theme === "dark")) document.documentElement.dataset.theme = ctx.theme;
  }

  window.addEventListener("message", (ev) => {
    if (ev.source !== host) return;
    const msg = ev.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.id !== undefined && msg.method === undefined) {
      const w = waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id);
      if (msg.error) w.reject(new Error(msg.error.message || "the host refused the request"));
      else w.resolve(msg.result);
      return;
    }
    switch (msg.method) {
      case "ui/notifications/tool-input":
        showSession(msg.params && msg.params.arguments && msg.params.arguments.session);
        break;
      case "ui/notifications/tool-result":
        showSession(sessionOfResult(msg.params));
        break;
      case "ui/notifications/host-context-changed":
        hostContext(msg.params);
        break;
      case "ui/resource-teardown":
      case "ping":
        if (msg.id !== undefined) post({ id: msg.id, result: {} });
        break;
      default:
        if (msg.id !== undefined) {
          post({ id: msg.id, error: { code: -32601, message: "polyrepl's view does not handle " + msg.method } });
        }
    }
  });

  // The host sizes the frame by what the app says its content takes.
  function sizeChanged() {
    const el = document.documentElement;
    const size = { width: Math.ceil(el.scrollWidth), height: Math.ceil(el.scrollHeight) };
    const key = size.width + "x" + size.height;
    if (key === lastSize) return;
    lastSize = key;
    notify("ui/notifications/size-changed", size);
  }

  ready = request("ui/initialize", {
    appInfo: { name: "polyrepl-view", version: "1" },
    appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
    protocolVersion: PROTOCOL,
  }).then((res) => {
    hostContext(res && res.hostContext);
    notify("ui/notifications/initialized");
    if (typeof ResizeObserver === "function") {
      new ResizeObserver(sizeChanged).observe(document.documentElement);
    }
    sizeChanged();
    return res;
  });

  // call runs one of the server's tools through the host: its
  // structured content, or an Error with the tool's words.
  async function call(name, args) {
    await ready;
    const res = await request("tools/call", { name, arguments: args });
    const text = ((res && res.content) || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    if (!res || res.isError) throw new Error(text || name + " failed");
    return res.structuredContent || {};
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // follow long-polls view_events: each call names the follow and how
  // many of its events the app has, so a reply the host lost comes
  // again; a follow the server no longer keeps, or one that ended, is
  // begun again from resume().
  function follow(name, since, on, resume) {
    let stopped = false;
    let id = "";
    let next = 0;
    let state = "";
    const conn = (s, error) => {
      if (s === state && !error) return;
      state = s;
      on(error ? { event: "conn", state: s, error } : { event: "conn", state: s });
    };
    (async () => {
      let pause = 500;
      while (!stopped) {
        try {
          const r = await call("view_events", { session: name, since: id ? 0 : since, follow: id, next, wait: 25 });
          if (stopped) return;
          if (r.lost) {
            id = "";
            next = 0;
            since = resume();
            continue;
          }
          id = r.follow;
          next = r.next;
          conn("live");
          pause = 500;
          for (const ev of r.events || []) on(ev);
          if (r.ended) {
            // Often a session the host showed before its first cell
            // made it: look again soon.
            conn("waiting", r.ended);
            id = "";
            next = 0;
            since = resume();
            await sleep(pause);
            pause = Math.min(pause * 2, 2000);
          }
        } catch (e) {
          if (stopped) return;
          conn("down", String((e && e.message) || e));
          await sleep(pause);
          pause = Math.min(pause * 2, 10000);
        }
      }
    })();
    return () => {
      stopped = true;
    };
  }

  window.polyreplTransport = {
    mode: "app",
    // Interrupt and answer: the person beside the agent stops a cell or
    // answers its question. Running cells, restart, kill, export and
    // the list of sessions are not offered here: the agent drives, and
    // `polyrepl view` has the rest.
    can: { sessions: false, exec: false, interrupt: true, answer: true, restart: false, kill: false, export: false },
    // The shown session's state (its running cell, the question it
    // asks), through the app's own tool: the agent's sessions tool is
    // the agent's.
    async sessions() {
      if (!shown) return { sessions: [], label: "", daemon: "running" };
      const r = await call("view_glance", { session: shown });
      return { sessions: r.session ? [r.session] : [], label: "", daemon: "running" };
    },
    follow,
    // The person's interrupt and answer go through the app's own tool,
    // recorded as theirs (how "view"), not as the agent's.
    interrupt(name) {
      return call("view_act", { session: name, action: "interrupt" });
    },
    answer(name, a) {
      const args = { session: name, action: "answer" };
      if (a && a.eof) args.eof = true;
      else args.text = (a && a.text) || "";
      if (a && a.secret) args.secret = true;
      return call("view_act", args);
    },
    exec() {
      return Promise.reject(new Error("the agent runs cells here; polyrepl view runs them for a person"));
    },
    restart() {
      return Promise.reject(new Error("restart is not offered in the app; polyrepl view offers it"));
    },
    kill() {
      return Promise.reject(new Error("kill is not offered in the app; polyrepl view offers it"));
    },
    async richURL(name, seq, i) {
      const r = await call("view_rich", { session: name, seq, index: i });
      if (!r.data) throw new Error(r.unsent || "the figure was not sent");
      return "data:" + r.mime + ";base64," + r.data;
    },
    outputURL() {
      return null;
    },
    exportURL() {
      return null;
    },
    onSession(fn) {
      sessionFns.push(fn);
      if (shown) fn(shown);
    },
  };
})();
