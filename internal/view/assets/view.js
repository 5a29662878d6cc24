// polyrepl's view: every session, one session's record live, and what a
// person does to it. It speaks only to window.polyreplTransport, made by
// page-transport.js (the page `polyrepl view` serves) or mcp-transport.js
// (the same page as an MCP App inside an agent's client):
//
//   mode             "page" | "app"
//   can              {sessions, exec, interrupt, answer, restart, kill, export}:
//                    which actions this transport offers (the page hides the rest)
//   sessions()       -> Promise<{sessions: [api.SessionInfo], label: string,
//                    daemon: "running" | "not running", error?: string}>
//   follow(name, since, on, resume) -> stop(): calls on(ev) with every
//                    api.RecordEvent of session name's record after seq since
//                    (entry, output, end, update, reconnected), and
//                    on({event: "conn", state: "live" | "waiting" | "down",
//                    error?}) as the stream's own state changes. It goes on
//                    until stop() is called, coming back by itself after a
//                    drop (a daemon restart, a laptop that slept) from
//                    resume(), the seq the view has seen everything up to;
//                    entries after it come again whole, and the view
//                    replaces what it had of them
//   exec(name, code), interrupt(name), restart(name), kill(name),
//   answer(name, {text, eof, secret})
//                    -> Promise<result JSON>; rejects with Error whose
//                    message is the daemon's words
//   richURL(name, seq, i) -> Promise<string>: a URL for an <img> or a
//                    sandboxed <iframe> showing entry seq's i-th rich output
//   outputURL(name, seq)  -> string | null: the whole output of a cut entry
//   exportURL(name, fmt)  -> string | null: the record as "md" or "ipynb"
//   onSession(fn)    app mode: fn(name) when the host shows a tool call on
//                    another session (the page picks its session itself)
(function () {
  const T = window.polyreplTransport;
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, attrs, ...kids) => {
    const n = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "class") n.className = attrs[k];
      else if (k === "text") n.textContent = attrs[k];
      else if (attrs[k] !== undefined && attrs[k] !== null && attrs[k] !== false) n.setAttribute(k, attrs[k]);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) n.append(kid);
    return n;
  };

  // What a streamed output keeps: its head and its tail. A cell printing
  // 10 MB shows its first and last HEAD/TAIL characters and the whole is
  // a click away; the page never holds more of it.
  const HEAD = 20000, TAIL = 20000;
  // An app beside a conversation shows the latest entries only.
  const APP_ENTRIES = 30;

  const view = {
    name: "",          // the session shown
    info: new Map(),   // name -> api.SessionInfo, from the last poll
    entries: new Map(),// seq -> {en, node, out}
    polls: 0,          // polls begun
    answered: 0,       // the last poll begun before an answer was sent
    fresh: true,       // the last poll's answer began after the last answer
    stop: null,        // ends the current follow
    last: 0,           // the highest seq seen
    history: [],       // code of cells, oldest first, for ↑ and ↓
    back: -1,          // where ↑ and ↓ stand in history (-1: the draft)
    draft: "",
  };

  // ---- words ----------------------------------------------------------
  const plural = (n, one, many) => n + " " + (n === 1 ? one : many || one + "s");
  function ago(iso) {
    const t = Date.parse(iso);
    if (!t) return "";
    return span((Date.now() - t) / 1000);
  }
  function span(s) {
    if (s < 0) s = 0;
    if (s < 10) return s.toFixed(1) + " s";
    if (s < 90) return Math.round(s) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    if (s < 172800) return (s / 3600).toFixed(1) + " h";
    return Math.round(s / 86400) + " days";
  }
  function bytes(n) {
    if (!n) return "";
    const u = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
    return (n >= 100 || i === 0 ? Math.round(n) : n.toFixed(1)) + " " + u[i];
  }
  const count = (n) => Number(n || 0).toLocaleString("en-US");
  const clock = (iso) => {
    const d = new Date(iso);
    return isNaN(d) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  };
  const who = (o) => (o.who || "someone") + (o.how ? " via " + o.how : "");
  function stateOf(s) {
    if (s.running && s.running.input) return "input";
    return s.state;
  }
  function stateWords(s) {
    const st = stateOf(s);
    if (st === "input") return "asks a question";
    if (st === "running" && s.running) return "cell " + s.running.cell + " running " + ago(s.running.started);
    if (st === "dead" && s.death) return "dead: " + s.death.cause;
    return st;
  }
  function sandboxWords(sb) {
    if (!sb || !sb.policy || sb.policy === "full") return "full (no sandbox)";
    return sb.policy + (sb.network === "on" ? ", network on" : ", network off");
  }

  // ---- highlighting ---------------------------------------------------
  const KW = {
    python: "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case print",
    r: "if else repeat while function for in next break TRUE FALSE NULL Inf NaN NA library require return",
    ruby: "alias and begin break case class def defined do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield puts require",
    js: "await break case catch class const continue debugger default delete do else export extends false finally for function if import in instanceof let new null return super switch this throw true try typeof undefined var void while with yield console require",
    julia: "begin break catch const continue do else elseif end export false finally for function global if import let local macro module quote return struct true try using while println",
    sh: "if then else elif fi case esac for select while until do done in function time echo export local read return set unset shift source",
    haskell: "case class data default deriving do else foreign if import in infix infixl infixr instance let module newtype of then type where putStrLn print",
  };
  const LANG = (rt) => {
    rt = (rt || "").toLowerCase();
    if (/python|ipython/.test(rt)) return "python";
    if (/^r$|jupyter:ir|^ir$/.test(rt)) return "r";
    if (/ruby|irb/.test(rt)) return "ruby";
    if (/node|javascript|deno/.test(rt)) return "js";
    if (/julia/.test(rt)) return "julia";
    if (/bash|^sh$|zsh|shell/.test(rt)) return "sh";
    if (/ghc|haskell/.test(rt)) return "haskell";
    return "";
  };
  const kwSets = {};
  function highlight(code, lang) {
    const kws = kwSets[lang] || (kwSets[lang] = new Set((KW[lang] || "").split(" ")));
    const com = lang === "js" ? "//[^\\n]*" : lang === "haskell" ? "--[^\\n]*" : "#[^\\n]*";
    const re = new RegExp(com + "|\"(?:[^\"\\\\\\n]|\\\\.)*\"?|'(?:[^'\\\\\\n]|\\\\.)*'?|\\b\\d[\\d_]*(?:\\.\\d+)?(?:e[+-]?\\d+)?\\b|[A-Za-z_][A-Za-z0-9_]*", "g");
    const out = document.createDocumentFragment();
    let at = 0, m;
    while ((m = re.exec(code))) {
      if (m.index > at) out.append(code.slice(at, m.index));
      const t = m[0];
      let cls = "";
      if (/^(#|\/\/|--)/.test(t)) cls = "com";
      else if (t[0] === '"' || t[0] === "'") cls = "str";
      else if (/^\d/.test(t)) cls = "num";
      else if (kws.has(t)) cls = "kw";
      out.append(cls ? el("span", { class: cls, text: t }) : t);
      at = m.index + t.length;
    }
    if (at < code.length) out.append(code.slice(at));
    return out;
  }

  // ---- sessions -------------------------------------------------------
  let pollTimer = null;
  async function poll() {
    clearTimeout(pollTimer);
    const n = ++view.polls;
    try {
      const r = await T.sessions();
      // A poll that began before an answer went may still show its
      // question: not that one.
      view.fresh = n > view.answered;
      view.info = new Map((r.sessions || []).map((s) => [s.name, s]));
      $("#me").textContent = r.label ? "you are " + r.label + " (how: view)" : "";
      view.down = !!(r.daemon && r.daemon !== "running");
      if (view.down) setConn("down", "the daemon is not running: sessions kept by their holders come back when one starts (any polyrepl command starts it)");
      drawSessions();
      if (!view.name && T.mode === "page") {
        const first = pickFirst();
        if (first) show(first);
      }
      drawHead();
    } catch (e) {
      setConn("down", "the view cannot reach polyrepl view: " + e.message);
    }
    const running = [...view.info.values()].some((s) => s.state === "running");
    const every = document.visibilityState !== "visible" ? 10000 : running || view.down ? 1000 : 2000;
    pollTimer = setTimeout(poll, every);
  }
  function pickFirst() {
    const want = decodeURIComponent(location.hash.slice(1));
    if (want) return want;
    let best = null;
    for (const s of view.info.values()) {
      if (!best || Date.parse(s.last_active) > Date.parse(best.last_active)) best = s;
    }
    return best && best.name;
  }
  function drawSessions() {
    const nav = $("#sessions");
    const list = [...view.info.values()].sort((a, b) => a.name.localeCompare(b.name));
    nav.replaceChildren();
    if (!list.length) {
      nav.append(el("p", { class: "empty", text: view.down ? "The daemon is not running." : "No sessions yet." }));
      return;
    }
    for (const s of list) {
      const st = stateOf(s);
      const row2 = [stateWords(s)];
      if (s.running && s.running.code) row2.push(who(s.running.client || {}) + ": " + s.running.code);
      if (s.memory) row2.push(bytes(s.memory));
      if (s.sandbox && s.sandbox.policy && s.sandbox.policy !== "full") row2.push(s.sandbox.policy);
      if (s.cwd) row2.push(s.cwd);
      nav.append(el("a", { href: "#" + encodeURIComponent(s.name), "data-session": s.name, "data-state": st,
          "aria-current": s.name === view.name ? "true" : "false", title: s.cwd || "" },
        el("div", { class: "row1" }, el("span", { class: "sname", text: s.name }), el("span", { class: "rt", text: s.runtime }),
          el("span", { class: "badge", "data-state": st, text: st === "input" ? "question" : st })),
        el("div", { class: "row2", text: row2.join(" · ") })));
    }
  }
  window.addEventListener("hashchange", () => {
    const want = decodeURIComponent(location.hash.slice(1));
    if (want && want !== view.name) show(want);
  });

  function drawHead() {
    const s = view.info.get(view.name);
    $("#head").hidden = !view.name;
    $("#pick").hidden = !!view.name;
    $("#editor").hidden = !view.name || !T.can.exec;
    if (!view.name) return;
    $("#name").textContent = view.name;
    document.title = view.name + (s ? " · " + (stateOf(s) === "input" ? "question" : s.state) : "") + " — polyrepl";
    const st = s ? stateOf(s) : "";
    $("#state").textContent = s ? stateWords(s) : !T.can.sessions ? "" : view.down ? "the daemon is not running" : "not created yet";
    $("#state").dataset.state = st;
    const facts = [];
    if (s) {
      facts.push(["runtime", s.runtime + (s.version ? " " + s.version : "")]);
      if (s.pid) facts.push(["pid", s.pid]);
      if (s.memory) facts.push(["memory", bytes(s.memory) + (s.memory_limit ? " of " + bytes(s.memory_limit) : "")]);
      facts.push(["cells", s.cells]);
      if (s.cwd) facts.push(["cwd", s.cwd]);
      if (s.where) facts.push(["where", s.where]);
      facts.push(["sandbox", sandboxWords(s.sandbox)]);
      if (s.problem) facts.push(["problem", s.problem]);
    }
    $("#facts").replaceChildren(...facts.map(([k, v]) => el("div", {}, el("dt", { text: k }), el("dd", { text: String(v) }))));
    // An app knows the session from its record between glances.
    const running = s ? s.state === "running" : [...view.entries.values()].some((it) => it.en.status === "running");
    for (const b of document.querySelectorAll("#actions [data-action]")) {
      b.hidden = !T.can[b.dataset.action];
      b.disabled = b.dataset.action === "interrupt" ? !running : false;
    }
    for (const a of document.querySelectorAll("#actions [data-export]")) {
      const url = T.can.export && T.exportURL(view.name, a.dataset.export);
      a.hidden = !url;
      if (url) a.href = url;
    }
    drawQuestion(s);
  }

  // ---- the question a running cell waits on ----------------------------
  let asked = "";
  function drawQuestion(s) {
    const q = s && s.running && s.running.input;
    const form = $("#question");
    if (!view.fresh) return;
    if (!q || !T.can.answer) {
      form.hidden = true;
      asked = "";
      return;
    }
    const key = view.name + "#" + s.running.cell + ":" + q.text + ":" + !!q.password;
    if (key === asked && !form.hidden) return;
    asked = key;
    form.hidden = false;
    $("#prompt").textContent = q.text || "The cell asks for a line:";
    const input = $("#answer");
    input.type = q.password ? "password" : "text";
    input.value = "";
    $("#eof").hidden = !!q.no_eof;
    form.dataset.password = q.password ? "true" : "false";
    input.focus();
  }
  // Forms are not submitted here: an MCP App's frame is sandboxed
  // without allow-forms, where a form's submit never fires. Buttons and
  // keys act instead.
  const onSubmit = (form, act) => {
    form.addEventListener("submit", (ev) => ev.preventDefault());
    form.querySelector("button[type=submit]").addEventListener("click", (ev) => {
      ev.preventDefault();
      act();
    });
  };
  onSubmit($("#question"), () => answer({ text: $("#answer").value }));
  $("#answer").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") {
      ev.preventDefault();
      answer({ text: $("#answer").value });
    }
  });
  $("#eof").addEventListener("click", () => answer({ eof: true }));
  async function answer(a) {
    const input = $("#answer");
    input.value = ""; // a password's answer never stays on the page
    view.answered = view.polls;
    view.fresh = false;
    try {
      await T.answer(view.name, a);
      $("#question").hidden = true;
      say("");
    } catch (e) {
      say(e.message, true);
    }
    setTimeout(poll, 150);
  }

  // ---- actions --------------------------------------------------------
  for (const b of document.querySelectorAll("#actions [data-action]")) {
    b.addEventListener("click", () => act(b.dataset.action));
  }
  const confirmWords = {
    restart: (n) => "Restart session '" + n + "'? Its runtime ends, with everything it holds, and a new one starts.",
    kill: (n) => "Kill session '" + n + "'? Its runtime ends, with everything it holds.",
  };
  async function act(what) {
    const name = view.name;
    if (confirmWords[what] && !window.confirm(confirmWords[what](name))) return;
    try {
      await T[what](name);
      say(what === "interrupt" ? "Interrupt sent." : what === "restart" ? "Restarted." : "Killed.");
    } catch (e) {
      say(e.message, true);
    }
    setTimeout(poll, 150);
  }
  function say(words, bad) {
    const s = $("#said");
    s.textContent = words;
    if (bad) s.dataset.bad = "";
    else delete s.dataset.bad;
  }

  // ---- the editor ------------------------------------------------------
  const code = $("#code");
  function shade() {
    const s = view.info.get(view.name);
    const lang = LANG((s && s.runtime) || "");
    $("#shade").replaceChildren(highlight(code.value + "\n", lang));
    $("#shade").scrollTop = code.scrollTop;
  }
  code.addEventListener("input", () => { view.back = -1; shade(); });
  code.addEventListener("scroll", () => { $("#shade").scrollTop = code.scrollTop; });
  code.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && ev.shiftKey) {
      ev.preventDefault();
      run();
    } else if (ev.key === "Tab" && !ev.shiftKey && !ev.ctrlKey && !ev.altKey && !ev.metaKey) {
      ev.preventDefault();
      code.setRangeText("    ", code.selectionStart, code.selectionEnd, "end");
      shade();
    } else if (ev.key === "ArrowUp" && !code.value.slice(0, code.selectionStart).includes("\n")) {
      if (recall(+1)) ev.preventDefault();
    } else if (ev.key === "ArrowDown" && !code.value.slice(code.selectionEnd).includes("\n")) {
      if (recall(-1)) ev.preventDefault();
    }
  });
  // recall steps through earlier cells' code: +1 older, -1 newer.
  function recall(step) {
    const h = view.history;
    if (!h.length) return false;
    let at = view.back;
    if (at === -1 && step < 0) return false;
    if (at === -1) view.draft = code.value;
    at = at === -1 ? h.length - 1 : at - step;
    if (at >= h.length) {
      view.back = -1;
      code.value = view.draft;
    } else {
      at = Math.max(at, 0);
      view.back = at;
      code.value = h[at];
    }
    shade();
    return true;
  }
  onSubmit($("#editor"), () => run());
  async function run() {
    const text = code.value;
    if (!text.trim()) return;
    $("#run").disabled = true;
    try {
      const r = await T.exec(view.name, text);
      code.value = "";
      view.back = -1;
      shade();
      say(r && r.cell ? "Sent as cell " + r.cell + "." : "Sent.");
    } catch (e) {
      say(e.message + (e.hint ? " — " + e.hint : ""), true);
    } finally {
      $("#run").disabled = false;
      code.focus();
    }
    setTimeout(poll, 150);
  }

  // ---- one session's record ----------------------------------------------
  function setConn(state, words) {
    const c = $("#conn");
    c.dataset.conn = state;
    c.textContent = words || { live: "live", waiting: "waiting for the session to be created", down: "reconnecting…", connecting: "connecting…" }[state] || state;
  }
  function show(name) {
    if (view.stop) view.stop();
    view.name = name;
    view.entries.clear();
    view.last = 0;
    view.history = [];
    view.back = -1;
    $("#record").replaceChildren();
    if (T.can.sessions && location.hash.slice(1) !== encodeURIComponent(name)) history.replaceState(null, "", "#" + encodeURIComponent(name));
    drawSessions();
    drawHead();
    shade();
    view.stop = T.follow(name, 0, onEvent, resumeFrom);
  }
  T.onSession((name) => { if (name && name !== view.name) show(name); });

  // resumeFrom is the seq the view has seen everything up to: the last
  // seen, less any entry still growing (it comes again whole).
  function resumeFrom() {
    let since = view.last;
    for (const [seq, it] of view.entries) {
      const en = it.en;
      if ((en.kind === "cell" && en.status === "running") || (en.kind === "idle" && seq === view.last)) since = Math.min(since, seq - 1);
    }
    return since;
  }

  function onEvent(ev) {
    switch (ev.event) {
      case "conn":
        setConn(ev.state, ev.state === "down" && ev.error ? "reconnecting: " + ev.error : "");
        return;
      case "reconnected":
        note("The daemon went away while the session lived on in its holder; a new daemon took it up, and the view follows it again.");
        return;
      case "entry":
      case "update":
        if (ev.entry) put(ev.entry, ev.event === "update" ? "update" : growing(ev.entry) ? "growing" : "whole");
        view.headDirty = true;
        break;
      case "end":
        if (ev.entry) end(ev.entry);
        view.headDirty = true;
        break;
      case "output":
        if (ev.output) grow(ev.output);
        break;
      default:
        return;
    }
    setConn("live");
    sched();
  }
  const growing = (en) => (en.kind === "cell" && en.status === "running") || en.kind === "idle";

  // note shows a line of the view's own in the record.
  function note(words) {
    $("#record").append(el("div", { class: "entry", "data-kind": "note" }, el("div", { class: "note", text: words })));
  }

  // put takes an entry: a new running cell or idle entry (its output
  // follows in output events), an entry whole (ended, or come again after
  // a drop), or an update of one seen before.
  function put(en, how) {
    view.last = Math.max(view.last, en.seq);
    let it = view.entries.get(en.seq);
    if (!it) {
      it = { en, node: el("article", { class: "entry" }), out: null, dirty: true };
      view.entries.set(en.seq, it);
      place(it);
    }
    it.en = en;
    if (how === "growing") it.out = { head: "", tail: "", dropped: 0, pending: "", streamed: true };
    else if (how === "whole" || !it.out || !it.out.streamed) it.out = { head: en.output || "", tail: "", dropped: 0, pending: "", streamed: false };
    if (en.kind === "cell" && en.code) remember(en);
    it.dirty = true;
  }
  function end(en) {
    const it = view.entries.get(en.seq);
    if (!it) return put(en, "whole");
    const out = it.out;
    it.en = Object.assign({}, en, { output: undefined });
    if (!out.streamed && en.output) out.head = en.output;
    out.pending = "";
    it.dirty = true;
  }
  function grow(c) {
    const it = view.entries.get(c.seq);
    if (!it) return;
    const out = it.out;
    if (c.offset === 0 && (out.head || out.tail)) {
      out.head = ""; out.tail = ""; out.dropped = 0;
    }
    out.streamed = true;
    if (c.skipped) out.dropped += c.skipped;
    if (c.file) out.file = c.file;
    let text = c.text || "";
    if (out.head.length < HEAD && !out.dropped && !out.tail) {
      const take = HEAD - out.head.length;
      out.head += text.slice(0, take);
      text = text.slice(take);
    }
    if (text) {
      out.tail += text;
      if (out.tail.length > TAIL) {
        out.dropped += out.tail.length - TAIL;
        out.tail = out.tail.slice(out.tail.length - TAIL);
      }
    }
    out.pending = c.pending || "";
    it.dirty = true;
  }
  function remember(en) {
    const h = view.history;
    if (h.length && h[h.length - 1] === en.code) return;
    if (h.includes(en.code) && h.lastIndexOf(en.code) === h.length - 1) return;
    h.push(en.code);
  }

  // place puts an entry's node in seq order.
  function place(it) {
    const rec = $("#record");
    let after = null;
    for (const n of rec.children) {
      const s = Number(n.dataset.seq);
      if (s && s > it.en.seq) { after = n; break; }
    }
    rec.insertBefore(it.node, after);
    if (T.mode === "app") {
      const cells = rec.querySelectorAll(".entry[data-seq]");
      for (let i = 0; i < cells.length - APP_ENTRIES; i++) {
        view.entries.delete(Number(cells[i].dataset.seq));
        cells[i].remove();
      }
    }
  }

  // Drawing waits for the next frame, so a burst of output events costs
  // one redraw.
  let frame = 0;
  function sched() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      // The record keeps to its end while the person has not scrolled
      // up; the page scrolls its main pane, an app its whole document.
      const sc = T.mode === "app" ? document.scrollingElement : $("#session");
      const stuck = sc.scrollHeight - sc.scrollTop - sc.clientHeight < 80;
      for (const it of view.entries.values()) if (it.dirty) draw(it);
      if (view.headDirty) {
        view.headDirty = false;
        drawHead();
      }
      if (stuck) sc.scrollTop = sc.scrollHeight;
    });
  }

  function draw(it) {
    it.dirty = false;
    const en = it.en;
    const n = it.node;
    n.dataset.seq = en.seq;
    n.dataset.kind = en.kind;
    n.dataset.status = en.status || "";
    n.id = "e" + en.seq;
    if (en.kind === "note") {
      n.replaceChildren(el("div", { class: "note", title: clock(en.started), text: en.text || (en.note && en.note.kind) || "" }));
      return;
    }
    const head = el("header", {},
      el("span", { class: "what", text: en.kind === "idle" ? "printed while no cell ran" : "cell " + (en.cell || "?") }),
      en.kind === "cell" ? el("span", { class: "who", text: who(en) }) : null,
      el("span", { class: "at", text: clock(en.started) }),
      el("span", { class: "st", text: statusWords(en) }));
    const kids = [head];
    if (en.code) {
      kids.push(el("pre", { class: "code" }, highlight(en.code, LANG(en.runtime))));
      if (en.code_cut) kids.push(cutLine("code", en.code_cut, null));
    }
    kids.push(outputNode(it));
    if (en.answers && en.answers.length) {
      kids.push(el("div", { class: "answers" }, ...en.answers.map((a) =>
        el("div", { text: "↳ answered " + (a.eof ? "with end of file" : JSON.stringify(a.text)) + " — " + who(a) }))));
    }
    if (en.display && !shownAsHTML(en)) kids.push(el("pre", { class: "value", text: en.display }));
    if (en.error) kids.push(errorNode(en.error));
    if (en.rich && en.rich.length) kids.push(richNode(en));
    if (en.status === "dead" && en.text) kids.push(el("div", { class: "cut", text: en.text }));
    n.replaceChildren(...kids);
  }
  // shownAsHTML says the value is also an HTML output (a DataFrame's
  // table): the page shows it once, as the table, as a notebook does.
  function shownAsHTML(en) {
    const value = (en.prompt && en.display.startsWith(en.prompt) ? en.display.slice(en.prompt.length) : en.display).trim();
    return (en.rich || []).some((r) => r.mime === "text/html" && (r.text || "").trim() === value);
  }
  function statusWords(en) {
    if (en.kind === "idle") return "";
    const st = en.status || "";
    if (st === "running") return "running " + ago(en.started);
    if (en.ended) return st + " in " + span((Date.parse(en.ended) - Date.parse(en.started)) / 1000);
    return st;
  }
  function outputNode(it) {
    const out = it.out, en = it.en;
    const pre = el("pre", { class: "output" });
    if (out.head) pre.append(out.head);
    if (out.dropped) {
      pre.append(cutLine("output", { total: out.head.length + out.dropped + out.tail.length, head: out.head.length, tail: out.tail.length }, en.seq));
    }
    if (out.tail) pre.append(out.tail);
    if (out.pending) pre.append(el("span", { class: "pending", text: out.pending }));
    if (!out.streamed && en.output_cut) pre.append(cutLine("output", en.output_cut, en.seq));
    return pre;
  }
  function cutLine(what, cut, seq) {
    const words = "[" + what + " cut: " + count(cut.total) + " characters in all; showing the first " + count(cut.head) + " and the last " + count(cut.tail) + "] ";
    const line = el("span", { class: "cut" }, words);
    const url = seq && T.outputURL(view.name, seq);
    if (url) line.append(el("a", { href: url, target: "_blank", rel: "noopener", text: "the whole " + what }));
    return el("div", {}, line);
  }
  function errorNode(e) {
    const head = (e.type ? e.type + ": " : "") + (e.message || "");
    if (!e.traceback) return el("pre", { class: "error", text: head });
    return el("details", { class: "error", open: e.traceback.length < 4000 ? "" : null },
      el("summary", { text: head }), el("pre", { text: e.traceback }));
  }
  function richNode(en) {
    const box = el("div", { class: "rich" });
    en.rich.forEach((r, i) => {
      const mime = r.mime || "";
      if (mime.startsWith("image/")) {
        const img = el("img", { class: "figure", alt: r.text || "a figure (" + mime + ")", "data-mime": mime });
        if (r.width) img.width = r.width;
        box.append(img);
        T.richURL(view.name, en.seq, i).then((u) => { img.src = u; }, (e) => { img.alt = "the figure could not be shown: " + e.message; });
      } else if (mime === "text/html") {
        const f = el("iframe", { class: "rich-html", sandbox: "", title: "HTML output", referrerpolicy: "no-referrer" });
        box.append(f);
        T.richURL(view.name, en.seq, i).then((u) => { f.src = u; }, () => f.replaceWith(el("pre", { text: r.text || "" })));
      } else {
        box.append(el("pre", { text: r.text || "[" + mime + " output, " + bytes(r.bytes) + "]" }));
      }
    });
    return box;
  }

  // Running cells' times tick even when nothing prints.
  setInterval(() => {
    for (const it of view.entries.values()) if (it.en.status === "running") it.dirty = true;
    sched();
  }, 1000);

  // ---- start ------------------------------------------------------------
  setConn("connecting");
  if (T.can.sessions || T.mode === "app") {
    poll();
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") poll(); });
  } else {
    document.body.classList.add("one");
  }
  shade();
})();
