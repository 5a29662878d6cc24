// polyrepl's Node.js worker: one session's namespace.
//
// The daemon starts it as `node --expose-internals worker.js SENTINEL` and
// talks to it over three channels:
//   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES" and then
//         NBYTES of UTF-8 code
//   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...})
//   fd 1  and fd 2 are one pipe that carries every byte the cell prints. After
//         a cell ends, the worker writes SENTINEL through process.stdout and
//         reports the cell done only once that write has completed, so the
//         daemon knows all of the cell's output has arrived.
//
// Cells run in the main context with vm.Script#runInThisContext, as in the
// `node` REPL: a separate vm context makes every access to a top-level var
// go through an interceptor (a loop over a top-level `var i` runs ~100 times
// slower) and gives user code other intrinsics than Node's own objects
// (`fs.readdirSync('.') instanceof Array` would be false). The worker's own
// state lives in this module's closure, out of the user's reach; the globals
// it needs are taken at start, so a cell that reassigns JSON or Buffer does
// not break it.
//
// --expose-internals is there for one thing: the REPL's own rewrite of
// top-level await (internal/repl/await), so `const x = await f()` works and
// persists exactly as it does in `node`. Without it (a future Node that
// moved the module) a cell with top-level await still runs, in a plain async
// function: its declarations stay local and it shows no value.
//
// Keep this file CommonJS, free of syntax newer than Node 18 and of heavy
// requires: it is on the path of every session's start.
'use strict';

const fs = require('fs');
const net = require('net');
const path = require('path');
const util = require('util');
const vm = require('vm');
const Module = require('module');

const workerFile = __filename;
const ObjectKeys = Object.keys;
const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const ObjectDefineProperty = Object.defineProperty;
const ObjectIs = Object.is;
const ObjectHasOwn = Function.prototype.call.bind(Object.prototype.hasOwnProperty);
const JSONStringify = JSON.stringify;
const ReflectApply = Reflect.apply;
const ArrayFrom = Array.from;
const ArrayIsArray = Array.isArray;
const NativePromise = Promise;
const PromiseResolve = Promise.resolve.bind(Promise);
const PromiseThen = Promise.prototype.then;
const NativeSet = Set;
const NativeMap = Map;
const NativeError = Error;
const BufferFrom = Buffer.from.bind(Buffer);
const BufferConcat = Buffer.concat.bind(Buffer);
const writeSync = fs.writeSync;
const writeFileSync = fs.writeFileSync;
const pathJoin = path.join;
const inspect = util.inspect;
const isNativeError = util.types.isNativeError;
const stdout = process.stdout;
const stderr = process.stderr;
const stdoutWrite = stdout.write;
const stderrWrite = stderr.write;
const processExit = process.exit;

// The REPL's display options: Proxies shown as such, never colors.
const showOptions = { showProxy: true, colors: false };
// The REPL puts "Uncaught" on its own line above error lines longer than
// this (inspect's default breakLength when not on a terminal).
const breakLength = 128;
const nameLimit = 500;
// Bounds of a cell's error in the "done" event, in characters, as the
// Python worker's: a cell can throw a message of any size, and the event
// must stay small enough for the daemon to take it whole. The whole error
// is saved first to a file in the spool directory the daemon gives.
const messageLimit = 10000;
const tracebackLimit = 30000;
const typeLimit = 200;
const spool = process.env.POLYREPL_WORKER_SPOOL || '';
const interruptMessage = 'Script execution was interrupted by `SIGINT`';
// A cell's error stack keeps frames down to the cell's own code.
const cellFrame = /^\s+at\s.*<cell \d+>:\d+:\d+\)?$/;
const frameLine = /^\s+at\s/;

let sentinel = '';
let eventFd = 4;
let running = null; // the cell awaiting a promise: { interrupt(), fail(e) }
let last; // `_`: the last cell's value, as in the REPL
let lastError; // `_error`: the last cell's error
let initial = null; // the globals before any cell: name -> descriptor summary
let lexicalNames = []; // top-level let/const/class names, from the inspector
let lexicalSession = null; // inspector session (false: none available)
let awaitRewrite = null; // internal/repl/await's processTopLevelAwait (false: none)
const interrupted = {}; // rejects a cell stopped by SIGINT while it awaited
const queue = [];
let busy = false;

function main() {
  const major = Number(process.versions.node.split('.')[0]);
  if (!(major >= 18)) {
    ReflectApply(stderrWrite, stderr, [`polyrepl needs Node.js 18 or newer; ${process.execPath} is ${process.version}\n`]);
    processExit(3);
  }
  // The end marker comes in the environment (older daemons: the last
  // argument), taken out before any cell runs.
  sentinel = process.env.POLYREPL_WORKER_SENTINEL || process.argv[2] || '';
  delete process.env.POLYREPL_WORKER_SENTINEL;
  if (sentinel === '') {
    ReflectApply(stderrWrite, stderr, ['polyrepl worker: start it as `node worker.js SENTINEL`\n']);
    processExit(2);
  }
  // Look like the REPL, and keep the end marker out of anything a cell can
  // print: process.argv, and /proc/self/cmdline that `ps` reads (setting the
  // title rewrites it).
  process.argv.length = 1;
  try {
    process.title = 'node';
  } catch {}

  // The control channels must not leak into the cell's subprocesses. Node
  // cannot set FD_CLOEXEC, but every fd it opens has it: reopen each pipe
  // through /proc and close the inherited descriptor.
  const commandFd = reopen(3, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  eventFd = reopen(4, fs.constants.O_WRONLY);

  // Writes to a pipe are asynchronous in Node: once the pipe is full, a
  // cell's output waits in a queue, where it can fall behind its
  // subprocesses' output or stderr's, or be lost when the cell calls
  // process.exit(). Blocking writes keep every byte in the order it was
  // written, like a terminal.
  for (const stream of [stdout, stderr]) {
    try {
      if (stream._handle && typeof stream._handle.setBlocking === 'function') stream._handle.setBlocking(true);
    } catch {}
    // A closed output pipe must not become an uncaught exception that
    // reports itself on the same pipe.
    stream.on('error', () => {});
  }
  hideExperimentalLoaderWarning();
  setupGlobals();

  // Only a cell awaiting a promise is interrupted here; synchronous code is
  // stopped by vm's breakOnSigint. Having a listener at all keeps a SIGINT
  // between cells from ending the session. (vm takes the listeners off
  // around its SIGINT watchdog, so for some microseconds at the start and
  // end of a cell's synchronous part SIGINT has its default action; the
  // daemon only signals while a cell runs, at most once per 250 ms.)
  process.on('SIGINT', () => {
    if (running !== null) running.interrupt();
  });
  process.on('uncaughtException', (e) => {
    // Thrown by a callback while a cell awaits: most likely the cell's own
    // work, which would otherwise wait forever; end the cell with it.
    if (running !== null) running.fail(e);
    else printUncaught(e);
  });
  process.on('unhandledRejection', (reason) => printUncaught(reason));

  send({ op: 'hello', version: process.versions.node, executable: process.execPath, pid: process.pid });
  readCommands(commandFd);
}

// reopen returns a close-on-exec descriptor for the same pipe as fd.
function reopen(fd, flags) {
  try {
    const copy = fs.openSync(`/proc/self/fd/${fd}`, flags);
    fs.closeSync(fd);
    return copy;
  } catch {
    return fd; // no /proc: the channel leaks into subprocesses
  }
}

// Node warns once that vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER, which
// lets cells call import(), is experimental; the REPL gets the same loader
// without the warning, so the session should too.
function hideExperimentalLoaderWarning() {
  const emitWarning = process.emitWarning;
  process.emitWarning = function emitWarningUnlessLoader(warning, ...rest) {
    if (typeof warning === 'string' && warning.includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
    return ReflectApply(emitWarning, this, [warning, ...rest]);
  };
}

// setupGlobals gives cells what the REPL gives them: require and module
// resolving from the cwd, the built-in modules as lazy globals (fs, path…),
// and `_`/`_error`; then it remembers every global, so that the names a cell
// defines can be told from Node's.
function setupGlobals() {
  const g = globalThis;
  const filename = path.join(process.cwd(), '<repl>');
  const replModule = new Module('<repl>');
  replModule.filename = filename;
  replModule.paths = Module._nodeModulePaths(process.cwd());
  const replRequire = Module.createRequire(filename);
  ObjectDefineProperty(g, 'module', { configurable: true, writable: true, value: replModule });
  ObjectDefineProperty(g, 'require', { configurable: true, writable: true, value: replRequire });

  for (const name of Module.builtinModules) {
    if (name[0] === '_' || name.includes('/') || ObjectHasOwn(g, name)) continue;
    const setReal = (value) => {
      delete g[name];
      g[name] = value;
    };
    ObjectDefineProperty(g, name, {
      get: () => {
        const lib = replRequire(name);
        try {
          ObjectDefineProperty(g, name, { get: () => lib, set: setReal, configurable: true, enumerable: false });
        } catch {}
        return lib;
      },
      set: setReal,
      configurable: true,
      enumerable: false,
    });
  }

  // Assigning `_` takes it over from the worker, as in the REPL.
  const underscore = (name, get) => ObjectDefineProperty(g, name, {
    get,
    set: (value) => ObjectDefineProperty(g, name, { value, writable: true, enumerable: true, configurable: true }),
    configurable: true,
    enumerable: false,
  });
  underscore('_', () => last);
  underscore('_error', () => lastError);

  initial = new NativeMap();
  for (const name of ObjectGetOwnPropertyNames(g)) {
    const d = ObjectGetOwnPropertyDescriptor(g, name);
    initial.set(name, { enumerable: d.enumerable, data: ObjectHasOwn(d, 'value'), value: d.value });
  }
}

// readCommands parses "exec CELL VALUE_LIMIT NBYTES\n" + code frames from
// the command pipe without blocking the event loop, so timers and promises
// of earlier cells keep running between cells.
function readCommands(fd) {
  const input = new net.Socket({ fd, readable: true, writable: false });
  let chunks = [];
  let have = 0;
  let header = null;
  input.on('data', (chunk) => {
    chunks.push(chunk);
    have += chunk.length;
    for (;;) {
      let buf = chunks.length === 1 ? chunks[0] : BufferConcat(chunks, have);
      chunks = [buf];
      if (header === null) {
        const nl = buf.indexOf(10);
        if (nl < 0) break;
        const parts = buf.toString('latin1', 0, nl).trim().split(/\s+/);
        buf = buf.subarray(nl + 1);
        chunks = [buf];
        have = buf.length;
        if (parts.length === 3 && parts[0] === 'complete') {
          header = { complete: true, size: Number(parts[1]), nonce: parts[2] };
        } else if (parts.length === 3 && parts[0] === 'vars') {
          header = { vars: true, size: Number(parts[1]), nonce: parts[2] };
        } else if ((parts.length !== 4 && parts.length !== 5) || parts[0] !== 'exec') {
          continue;
        } else {
          header = { cell: Number(parts[1]), limit: Number(parts[2]), size: Number(parts[3]), nonce: parts[4] };
        }
      }
      if (have < header.size) break;
      const code = buf.toString('utf8', 0, header.size);
      buf = buf.subarray(header.size);
      chunks = [buf];
      have = buf.length;
      if (header.complete) {
        // Between cells, answered at once: no cell, nothing printed.
        send({ op: 'complete', nonce: header.nonce, matches: complete(code) });
      } else if (header.vars) {
        // A look between cells: nothing printed, nothing assigned (vars.js).
        send({ op: 'vars', nonce: header.nonce, ...look(lookArgs(code)) });
      } else {
        queue.push({ cell: header.cell, limit: header.limit, code, nonce: header.nonce });
      }
      header = null;
    }
    pump();
  });
  // The daemon closed the channel: end quietly.
  input.on('end', () => processExit(0));
  input.on('error', () => processExit(0));
}

function pump() {
  if (busy || queue.length === 0) return;
  busy = true;
  const job = queue.shift();
  ReflectApply(PromiseThen, runCell(job), [(r) => finish(r, job), (e) => finish({
    op: 'done', cell: job.cell, status: 'error',
    error: { type: 'InternalError', message: `the polyrepl worker failed: ${String(e)}`, traceback: '' },
  }, job)]);
}

// finish ends a cell: it lets what the cell queued for right after it (next
// ticks, promise reactions, immediates) run and print, then writes the
// marker after everything printed, then reports the cell.
// The result echoes the exec's nonce, so the daemon takes no event a cell
// forged for it.
function finish(result, job) {
  // What the daemon reads from the head of an event too long to take
  // comes first: which cell, its nonce, its status.
  const head = { op: result.op, cell: result.cell };
  if (job.nonce) head.nonce = job.nonce;
  head.status = result.status;
  for (const k of ObjectKeys(result)) {
    if (!ObjectHasOwn(head, k)) head[k] = result[k];
  }
  result = bounded(head);
  setImmediate(() => flush((ok) => {
    result.flushed = ok;
    send(result);
    busy = false;
    pump();
  }));
}

function flush(cb) {
  let called = false;
  const done = (ok) => {
    if (!called) {
      called = true;
      cb(ok);
    }
  };
  try {
    for (const stream of [stdout, stderr]) {
      while (stream.writableCorked) stream.uncork();
    }
    // stderr's queue first: both streams share the pipe the marker ends.
    ReflectApply(stderrWrite, stderr, ['', () => {
      try {
        ReflectApply(stdoutWrite, stdout, [sentinel, (err) => done(!err)]);
      } catch {
        done(false);
      }
    }]);
  } catch {
    done(false);
  }
}

// bounded holds a result's error to the bounds above, saying each cut
// and how long the text was, with the whole saved to a file.
function bounded(result) {
  const e = result.error;
  if (!e || typeof e !== 'object') return result;
  const message = typeof e.message === 'string' ? e.message : '';
  const tb = typeof e.traceback === 'string' ? e.traceback : '';
  if (message.length > messageLimit || tb.length > tracebackLimit) {
    const whole = tb && tb.includes(message) ? tb : `${e.type}: ${message}\n\n${tb}`;
    if (spool) {
      try {
        const file = pathJoin(spool, `error-${process.pid}-${Date.now()}-${(Math.random() * 1e9) | 0}.txt`);
        writeFileSync(file, whole, { mode: 0o600, flag: 'wx' });
        e.whole = file;
      } catch (err) {
        e.whole_err = String(err && err.message);
      }
    }
    if (message.length > messageLimit) e.message_total = message.length;
    if (tb.length > tracebackLimit) e.traceback_total = tb.length;
  }
  e.type = cutText(typeof e.type === 'string' ? e.type : String(e.type), typeLimit, ' ');
  e.message = cutText(message, messageLimit, '\n');
  e.traceback = cutText(tb, tracebackLimit, '\n');
  return result;
}

// cutText is text, or its head and tail with the cut said between them,
// as the daemon's bound.Marker says it.
function cutText(text, limit, sep) {
  if (text.length <= limit) return text;
  const head = limit >> 1;
  const tail = limit - head;
  const n = text.length - limit;
  const count = n === 1 ? '1 character' : `${String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} characters`;
  return `${text.slice(0, head)}${sep}[\u2026 ${count} cut \u2026]${sep}${text.slice(text.length - tail)}`;
}

function send(obj) {
  const buf = BufferFrom(JSONStringify(obj) + '\n', 'utf8');
  let off = 0;
  try {
    while (off < buf.length) off += writeSync(eventFd, buf, off, buf.length - off);
  } catch {
    processExit(0); // the daemon is gone
  }
}

async function runCell(job) {
  const { cell, limit, code } = job;
  const filename = `<cell ${cell}>`;
  const result = { op: 'done', cell, status: 'done' };
  let compiled;
  try {
    compiled = compile(code, filename);
  } catch (e) {
    lastError = e;
    result.status = 'error';
    result.error = describe(e, true);
    cellLook(result, code);
    return result;
  }
  try {
    let value = compiled.script.runInThisContext({ breakOnSigint: true, displayErrors: false });
    if (compiled.async) {
      const settled = await settle(value);
      value = compiled.valued && settled != null ? settled.value : undefined;
    }
    last = value;
    if (value !== undefined) cutValue(result, inspect(value, showOptions), limit);
  } catch (e) {
    if (isInterrupt(e)) {
      result.status = 'interrupted';
      result.error = {
        type: 'Error',
        message: interruptMessage,
        traceback: `Uncaught Error [ERR_SCRIPT_EXECUTION_INTERRUPTED]: ${interruptMessage}`,
      };
    } else {
      lastError = e;
      result.status = 'error';
      result.error = describe(e, false);
    }
  } finally {
    running = null;
  }
  cellLook(result, code);
  return result;
}

// settle waits for an async cell, or for SIGINT or an uncaught exception
// to end it first.
function settle(promise) {
  return new NativePromise((resolve, reject) => {
    running = { interrupt: () => reject(interrupted), fail: reject };
    ReflectApply(PromiseThen, PromiseResolve(promise), [resolve, reject]);
  });
}

function isInterrupt(e) {
  if (e === interrupted) return true;
  try {
    return isNativeError(e) && e.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED';
  } catch {
    return false;
  }
}

// compile follows the REPL: code that looks like an object literal is tried
// in parentheses first; code that does not compile because of a top-level
// await is rewritten into an async function the way the REPL does it.
function compile(code, filename) {
  const asObject = /^\s*{/.test(code) && !/;\s*$/.test(code) ? `(${code.trim()})\n` : null;
  if (asObject !== null) {
    try {
      return { script: makeScript(asObject, filename), async: false };
    } catch {}
  }
  let error;
  try {
    return { script: makeScript(code, filename), async: false };
  } catch (e) {
    error = e;
  }
  if (isNativeError(error) && error.name === 'SyntaxError' && code.includes('await')) {
    for (const src of asObject !== null ? [asObject, code] : [code]) {
      const wrapped = rewriteAwait(src);
      if (wrapped === null) continue;
      try {
        return { script: makeScript(wrapped.code, filename), async: true, valued: wrapped.valued };
      } catch {}
    }
  }
  throw error;
}

function makeScript(src, filename) {
  const options = { filename };
  // import() in a cell resolves from the cwd, as in the REPL (Node 20.12+).
  const loader = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (loader !== undefined) options.importModuleDynamically = loader;
  return new vm.Script(src, options);
}

// rewriteAwait turns code with top-level await into an async function call
// that hoists its declarations and returns { value } of its last
// expression, or null if the code has no top-level await.
function rewriteAwait(src) {
  if (awaitRewrite === null) {
    try {
      awaitRewrite = require('internal/repl/await').processTopLevelAwait;
      if (typeof awaitRewrite !== 'function') awaitRewrite = false;
    } catch {
      awaitRewrite = false;
    }
  }
  if (awaitRewrite === false) {
    // On one line with the code, so that line numbers stay right.
    return { code: `(async () => { ${src}\n})()`, valued: false };
  }
  try {
    const code = awaitRewrite(src);
    return code === null ? null : { code, valued: true };
  } catch {
    return null;
  }
}

function cutValue(result, text, limit) {
  if (text.length <= limit) {
    result.value = text;
    result.value_total = countCodePoints(text);
    return;
  }
  const points = ArrayFrom(text);
  result.value_total = points.length;
  if (points.length <= limit) {
    result.value = text;
    return;
  }
  const head = Math.floor(limit / 2);
  result.value_head = points.slice(0, head).join('');
  result.value_tail = points.slice(points.length - (limit - head)).join('');
}

function countCodePoints(text) {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) i++;
    }
    n++;
  }
  return n;
}

// describe is the error as the REPL shows it ("Uncaught TypeError: …"),
// with the stack cut below the cell's own frames (the worker's and vm's
// are of no interest). A syntax error keeps its source line and caret.
function describe(e, atCompile) {
  let type;
  let message;
  let isError = false;
  try {
    isError = isNativeError(e) || e instanceof NativeError;
  } catch {}
  if (isError) {
    type = safeString(() => e.name, 'Error');
    message = safeString(() => e.message, '');
    let stack;
    try {
      stack = e.stack;
    } catch {}
    if (typeof stack === 'string') {
      const cut = atCompile ? stack.replace(/^\s+at\s.*(?:\n|$)/gm, '').replace(/\n+$/, '') : trimStack(stack);
      if (cut !== stack) {
        try {
          e.stack = cut;
        } catch {}
      }
    }
  } else if (e === null || e === undefined) {
    type = String(e);
    message = String(e);
  } else if (typeof e === 'object' || typeof e === 'function') {
    type = safeString(() => e.constructor.name, '') || 'Object';
    message = show(e);
  } else {
    type = typeof e;
    message = typeof e === 'string' ? e : show(e);
  }
  let text = show(e);
  // The REPL drops the brackets of a stack-less error: "[Error: x]".
  if (isError && text[0] === '[' && text[text.length - 1] === ']') text = text.slice(1, -1);
  return { type, message, traceback: uncaught(text) };
}

function trimStack(stack) {
  const lines = stack.split('\n');
  let lastCell = -1;
  for (let i = 0; i < lines.length; i++) {
    if (cellFrame.test(lines[i])) lastCell = i;
  }
  if (lastCell >= 0) return lines.slice(0, lastCell + 1).join('\n');
  return lines.filter((l) => !(frameLine.test(l) && l.includes(workerFile))).join('\n');
}

// uncaught marks an error's text the way the REPL does: "Uncaught " before
// the line that names the error, or above the whole text if none does.
function uncaught(text) {
  const lines = text.split(/(?<=\n)/);
  let matched = false;
  let out = '';
  for (const line of lines) {
    if (!matched && /^\[?([A-Z][a-z0-9_]*)*Error/.test(line)) {
      out += line.length <= breakLength ? `Uncaught ${line}` : `Uncaught:\n${line}`;
      matched = true;
    } else {
      out += line;
    }
  }
  if (!matched) out = `Uncaught${lines.length === 1 ? ' ' : ':\n'}${out}`;
  return out;
}

function printUncaught(e) {
  let text;
  try {
    text = describe(e, false).traceback;
  } catch {
    text = 'Uncaught exception';
  }
  try {
    ReflectApply(stderrWrite, stderr, [text.endsWith('\n') ? text : text + '\n']);
  } catch {}
}

function show(v) {
  try {
    return inspect(v, showOptions);
  } catch (e) {
    return `<inspect failed: ${safeString(() => String(e), 'unknown error')}>`;
  }
}

function safeString(f, fallback) {
  try {
    const v = f();
    return v === undefined ? fallback : String(v);
  } catch {
    return fallback;
  }
}

// names lists what the user defined at top level: globals that Node did not
// put there (var, function, plain assignment, or a Node global the user
// replaced), and let/const/class bindings, which no object holds: V8's
// inspector lists them. It is asked only after cells that could declare one.
function names(code) {
  if (/\b(?:let|const|class)\b/.test(code)) refreshLexicalNames();
  const found = new NativeSet(lexicalNames);
  const g = globalThis;
  for (const name of ObjectKeys(g)) {
    const before = initial.get(name);
    if (before === undefined || !before.enumerable) {
      found.add(name);
      continue;
    }
    if (!before.data) continue; // a lazy Node global, loaded since
    const d = ObjectGetOwnPropertyDescriptor(g, name);
    if (d !== undefined && ObjectHasOwn(d, 'value') && !ObjectIs(d.value, before.value)) found.add(name);
  }
  return ArrayFrom(found).sort();
}

const jsKeywords = ['await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger',
  'default', 'delete', 'do', 'else', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if',
  'import', 'in', 'instanceof', 'let', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw',
  'true', 'try', 'typeof', 'undefined', 'var', 'void', 'while', 'yield'];
const dottedName = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;

// complete is what word may become, for a console's Tab: a global or
// top-level name or keyword, or after a dot a property of the object the
// dotted names before it reach (its own and its prototypes'), as the
// REPL's Tab does. Only dotted names are evaluated (a getter may run);
// nothing is printed.
function complete(word) {
  const found = new NativeSet();
  const dot = word.lastIndexOf('.');
  const prefix = dot < 0 ? word : word.slice(dot + 1);
  const add = (names, head) => {
    for (const n of names) {
      if (typeof n === 'string' && n.startsWith(prefix) && found.size < 200) found.add(head + n);
    }
  };
  try {
    if (dot < 0) {
      refreshLexicalNames();
      add(lexicalNames, '');
      for (let o = globalThis; o !== null && o !== undefined; o = Object.getPrototypeOf(o)) {
        add(ObjectGetOwnPropertyNames(o), '');
      }
      add(jsKeywords, '');
    } else {
      const expr = word.slice(0, dot);
      if (!dottedName.test(expr)) return [];
      let o = vm.runInThisContext(expr);
      if (o === null || o === undefined) return [];
      if (typeof o !== 'object' && typeof o !== 'function') o = Object(o);
      for (; o !== null && o !== undefined; o = Object.getPrototypeOf(o)) {
        add(ObjectGetOwnPropertyNames(o), expr + '.');
      }
    }
  } catch {}
  return ArrayFrom(found).sort();
}

function refreshLexicalNames() {
  if (lexicalSession === null) {
    try {
      const inspector = require('inspector');
      lexicalSession = new inspector.Session();
      lexicalSession.connect();
    } catch {
      lexicalSession = false; // Node built without the inspector
    }
  }
  if (lexicalSession === false) return;
  try {
    // An in-process session answers synchronously.
    lexicalSession.post('Runtime.globalLexicalScopeNames', {}, (err, r) => {
      if (!err && r && ArrayIsArray(r.names)) lexicalNames = r.names;
    });
  } catch {}
}

main();
