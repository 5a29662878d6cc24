// The transport of the page `polyrepl view` serves: fetch for actions,
// server-sent events for a record as it grows. The server is this page's
// own origin; its cookie carries the token.
"use strict";
(function () {
  const enc = encodeURIComponent;

  async function json(resp) {
    let body = null;
    try {
      body = await resp.json();
    } catch (e) {
      body = null;
    }
    if (!resp.ok) {
      const words = (body && body.error) || resp.status + " " + resp.statusText;
      const err = new Error(words);
      err.code = body && body.code;
      err.hint = body && body.hint;
      err.status = resp.status;
      throw err;
    }
    return body;
  }

  async function post(name, what, body) {
    const resp = await fetch("/api/sessions/" + enc(name) + "/" + what, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
      credentials: "same-origin",
    });
    return json(resp);
  }

  // follow opens one event stream at a time; after a drop it waits a
  // little longer each time (at most 5 s) and comes back from resume().
  function follow(name, since, on, resume) {
    let es = null;
    let stopped = false;
    let wait = 250;
    let timer = null;
    const open = (from) => {
      if (stopped) return;
      es = new EventSource("/api/sessions/" + enc(name) + "/events?since=" + from);
      es.onmessage = (m) => {
        wait = 250;
        let ev;
        try {
          ev = JSON.parse(m.data);
        } catch (e) {
          return;
        }
        on(ev);
      };
      es.addEventListener("conn", (m) => {
        let st = {};
        try {
          st = JSON.parse(m.data);
        } catch (e) {}
        on(Object.assign({ event: "conn" }, st));
      });
      es.onerror = () => {
        // EventSource would come back by itself, but from the since it
        // was opened with: close it and come back from what was seen.
        es.close();
        es = null;
        if (stopped) return;
        on({ event: "conn", state: "down" });
        timer = setTimeout(() => open(resume()), wait);
        wait = Math.min(wait * 2, 5000);
      };
    };
    open(since);
    // A laptop that slept, or a tab in the background: when the page is
    // seen again, a stream that went quiet is made anew at once.
    const wake = () => {
      if (document.visibilityState === "visible" && !es && !stopped) {
        clearTimeout(timer);
        wait = 250;
        open(resume());
      }
    };
    document.addEventListener("visibilitychange", wake);
    window.addEventListener("online", wake);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", wake);
      window.removeEventListener("online", wake);
      if (es) es.close();
    };
  }

  const base = (name, seq) => "/api/sessions/" + enc(name) + "/entries/" + seq;

  window.polyreplTransport = {
    mode: "page",
    can: { sessions: true, exec: true, interrupt: true, answer: true, restart: true, kill: true, export: true },
    sessions: () => fetch("/api/sessions", { credentials: "same-origin" }).then(json),
    follow,
    exec: (name, code) => post(name, "exec", { code }),
    interrupt: (name) => post(name, "interrupt"),
    restart: (name) => post(name, "restart"),
    kill: (name) => post(name, "kill"),
    answer: (name, a) => post(name, "input", { text: a.text || "", eof: !!a.eof, secret: !!a.secret }),
    richURL: (name, seq, i) => Promise.resolve(base(name, seq) + "/rich/" + i),
    outputURL: (name, seq) => base(name, seq) + "/output",
    exportURL: (name, fmt) => "/api/sessions/" + enc(name) + "/export?format=" + fmt,
    onSession: () => {},
  };
})();
