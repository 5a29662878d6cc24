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
"use strict";
