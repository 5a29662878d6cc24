// polyrepl's Node.js worker, its looks (appended to worker.js, in the same
// script): what the session holds, one line a name, or a member of what a
// path names, made from the values' structure.
//
// A look runs none of the user's code: it reads own-property descriptors
// (a getter is listed as a getter, never called), asks nothing of a Proxy
// (its traps are code), calls Node's own getters and methods taken at start
// (Map size, a typed array's byteLength, Date's toISOString) rather than
// what a cell may have replaced, and reads a let/const/class name by
// evaluating that identifier alone. So it needs no time limit, and an
// object whose toString or getters throw or loop is listed like another.

const ObjectGetPrototypeOf = Object.getPrototypeOf;
const StringFn = String;
const MathMin = Math.min;
// util.types' functions themselves, taken now: a cell can replace them
// on the module object.
const types = {
  isTypedArray: util.types.isTypedArray, isArrayBuffer: util.types.isArrayBuffer, isMap: util.types.isMap,
  isSet: util.types.isSet, isDate: util.types.isDate, isRegExp: util.types.isRegExp, isPromise: util.types.isPromise,
};
const isProxy = util.types.isProxy;
const nativeGetter = (proto, name) => ObjectGetOwnPropertyDescriptor(proto, name).get;
const MapSize = nativeGetter(Map.prototype, 'size');
const SetSize = nativeGetter(Set.prototype, 'size');
const MapEntries = Map.prototype.entries;
const MapGet = Map.prototype.get;
const MapHas = Map.prototype.has;
const SetValues = Set.prototype.values;
const MapIteratorNext = ObjectGetPrototypeOf(new Map().entries()).next;
const SetIteratorNext = ObjectGetPrototypeOf(new Set().values()).next;
const TypedArrayProto = ObjectGetPrototypeOf(Uint8Array.prototype);
const TypedArrayByteLength = nativeGetter(TypedArrayProto, 'byteLength');
const TypedArrayLength = nativeGetter(TypedArrayProto, 'length');
const TypedArrayTag = nativeGetter(TypedArrayProto, Symbol.toStringTag);
const ArrayBufferByteLength = nativeGetter(ArrayBuffer.prototype, 'byteLength');
const DateToISOString = Date.prototype.toISOString;
const RegExpSource = nativeGetter(RegExp.prototype, 'source');
const RegExpFlags = nativeGetter(RegExp.prototype, 'flags');
const FunctionToString = Function.prototype.toString;
const BufferIsBuffer = Buffer.isBuffer;
const lookScripts = new NativeMap(); // identifier -> vm.Script reading it
const identifier = /^[A-Za-z_$][\w$]*$/;

// lookArgs reads a look's arguments ({path, all, limit, preview}).
function lookArgs(text) {
  let a = {};
  try {
    a = JSON.parse(text) || {};
  } catch {}
  const num = (v, d, lo, hi) => (typeof v === 'number' && v >= lo ? MathMin(v, hi) : d);
  return {
    path: typeof a.path === 'string' ? a.path : '',
    all: a.all === true,
    limit: num(a.limit, 100, 1, 10000) | 0,
    width: num(a.preview, 80, 10, 1000) | 0,
  };
}

// look answers a "vars" command: {vars, total} or {error}.
function look(a) {
  try {
    if (a.path === '') {
      const found = a.all ? allNames() : ownNames();
      return { vars: linesFor(found, a), total: found.length };
    }
    return members(follow(a.path), a.path, a);
  } catch (e) {
    return { error: e instanceof LookError ? e.message : `the look failed: ${safeString(() => e.message, 'an error')}` };
  }
}

class LookError extends NativeError {}

// ownNames are the names cells defined, as names() lists them (no
// built-in, no module loaded lazily, none of the worker's); allNames every
// global and top-level binding.
function ownNames() {
  return names('');
}

function allNames() {
  const found = new NativeSet(lexicalNames);
  for (const n of ObjectGetOwnPropertyNames(globalThis)) found.add(n);
  return ArrayFrom(found).sort();
}

// binding is a top-level name's value: a global's own descriptor (a getter
// is not called) or a let/const/class binding read by its identifier.
function binding(name) {
  const d = ObjectGetOwnPropertyDescriptor(globalThis, name);
  if (d !== undefined) return d;
  if (!identifier.test(name)) return undefined;
  let s = lookScripts.get(name);
  if (s === undefined) {
    s = new vm.Script(name, { filename: '<polyrepl look>' });
    if (lookScripts.size < 10000) lookScripts.set(name, s);
  }
  try {
    return { value: s.runInThisContext(), enumerable: true };
  } catch (e) {
    return { error: e }; // in its temporal dead zone, or gone
  }
}

function linesFor(found, a) {
  const out = [];
  for (let i = 0; i < found.length && i < a.limit; i++) {
    out.push(lineOf(found[i], binding(found[i]), a));
  }
  return out;
}

// lineOf is the line for a property or binding's descriptor d.
function lineOf(name, d, a) {
  if (d === undefined) return { name, type: 'undefined' };
  if (d.error !== undefined) return { name, type: 'uninitialized', note: 'declared, not yet initialized' };
  if (!ObjectHasOwn(d, 'value')) {
    return { name, type: d.get ? 'getter' : 'setter', note: 'an accessor: a look does not call it' };
  }
  try {
    return describeValue(name, d.value, a.width);
  } catch (e) {
    return { name, type: typeof d.value, note: `cannot look: ${safeString(() => e.message, 'an error')}` };
  }
}

// typeName is the name of v's constructor, read from its prototype's own
// data property: no getter runs.
function typeName(v) {
  const proto = ObjectGetPrototypeOf(v);
  if (proto === null) return 'Object: null prototype';
  if (isProxy(proto)) return 'Object'; // its traps would run
  const c = ObjectGetOwnPropertyDescriptor(proto, 'constructor');
  if (c && typeof c.value === 'function') {
    const n = ObjectGetOwnPropertyDescriptor(c.value, 'name');
    if (n && typeof n.value === 'string' && n.value !== '') return n.value;
  }
  return 'Object';
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

// short is a value in a few characters, for a preview: primitives as
// written, objects by their type.
function short(v) {
  switch (typeof v) {
    case 'string': return JSONStringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
    case 'number': case 'boolean': case 'undefined': return StringFn(v);
    case 'bigint': return `${StringFn(v)}n`;
    case 'symbol': return safeString(() => v.description === undefined ? 'Symbol()' : `Symbol(${v.description})`, 'Symbol');
    case 'function': return isProxy(v) ? 'Proxy' : `[Function ${fnName(v)}]`;
    default:
      if (v === null) return 'null';
      if (isProxy(v)) return 'Proxy';
      if (ArrayIsArray(v)) return `Array(${arrayLength(v)})`;
      return typeName(v);
  }
}

function fnName(f) {
  const n = ObjectGetOwnPropertyDescriptor(f, 'name');
  return n && typeof n.value === 'string' && n.value !== '' ? n.value : '(anonymous)';
}

function arrayLength(v) {
  return ObjectGetOwnPropertyDescriptor(v, 'length').value;
}

// join lists parts until width, saying the rest with "…".
function join(parts, width, more) {
  let out = '';
  for (const p of parts) {
    const next = out === '' ? p : `${out}, ${p}`;
    if (next.length > width - 2) return out === '' ? '…' : `${out}, …`;
    out = next;
  }
  return more ? (out === '' ? '…' : `${out}, …`) : out;
}

// ownEntries are an object's first own string-keyed properties (all:
// non-enumerable ones too) as [key, descriptor], at most limit, and how
// many there are.
function ownEntries(v, limit, all) {
  const keys = all ? ObjectGetOwnPropertyNames(v) : ObjectKeys(v);
  const out = [];
  for (let i = 0; i < keys.length && out.length < limit; i++) {
    out.push([keys[i], ObjectGetOwnPropertyDescriptor(v, keys[i])]);
  }
  return { entries: out, total: keys.length };
}

function entryText([k, d]) {
  if (!ObjectHasOwn(d, 'value')) return `${k}: [${d.get ? 'Getter' : 'Setter'}]`;
  return `${k}: ${short(d.value)}`;
}

// iterate takes the first n of a Map's entries or a Set's values with the
// native iterators.
function iterate(v, isMap, n) {
  const it = ReflectApply(isMap ? MapEntries : SetValues, v, []);
  const next = isMap ? MapIteratorNext : SetIteratorNext;
  const out = [];
  while (out.length < n) {
    const r = ReflectApply(next, it, []);
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

// describeValue is the line for v: its type, size, memory, preview, and
// whether a path can look inside.
function describeValue(name, v, width) {
  const t = typeof v;
  if (v === null) return { name, type: 'null', preview: 'null' };
  if (t !== 'object' && t !== 'function') {
    const line = { name, type: t, preview: short(v) };
    if (t === 'string') {
      line.size = plural(v.length, 'character', 'characters');
      line.preview = JSONStringify(v.slice(0, width));
    }
    return line;
  }
  if (isProxy(v)) return { name, type: 'Proxy', note: 'a Proxy: a look does not run its traps' };
  if (t === 'function') {
    // Its head from Function.prototype.toString (Node's, not the
    // function's own toString): function add(a, b), class P, (x) =>.
    const src = safeString(() => ReflectApply(FunctionToString, v, []), '');
    const isClass = /^class\b/.test(src);
    const arrow = src.indexOf('=>');
    const brace = src.indexOf('{');
    let head = arrow >= 0 && (brace < 0 || arrow < brace) ? src.slice(0, arrow + 2) : brace >= 0 ? src.slice(0, brace) : src;
    head = head.replace(/\s+/g, ' ').trim();
    if (head === '' || head.includes('[native code]')) head = `function ${fnName(v)}`;
    return { name, type: isClass ? 'class' : 'function', preview: head };
  }
  const type = typeName(v);
  if (ArrayIsArray(v)) {
    const n = arrayLength(v);
    const k = MathMin(n, 20);
    const parts = [];
    for (let i = 0; i < k; i++) {
      const d = ObjectGetOwnPropertyDescriptor(v, i);
      parts.push(d === undefined ? 'empty' : entryText([i, d]).slice(StringFn(i).length + 2));
    }
    return { name, type, size: plural(n, 'item', 'items'), preview: `[${join(parts, width - 2, n > k)}]`, members: n > 0 };
  }
  if (BufferIsBuffer(v) || types.isTypedArray(v)) {
    const bytes = ReflectApply(TypedArrayByteLength, v, []);
    const n = ReflectApply(TypedArrayLength, v, []);
    const parts = [];
    for (let i = 0; i < n && i < 20; i++) parts.push(StringFn(v[i]));
    return { name, type: BufferIsBuffer(v) ? 'Buffer' : ReflectApply(TypedArrayTag, v, []), size: plural(bytes, 'byte', 'bytes'),
      memory: bytes, preview: join(parts, width, n > 20), members: n > 0 };
  }
  if (types.isArrayBuffer(v)) {
    const bytes = ReflectApply(ArrayBufferByteLength, v, []);
    return { name, type, size: plural(bytes, 'byte', 'bytes'), memory: bytes };
  }
  if (types.isMap(v)) {
    const n = ReflectApply(MapSize, v, []);
    const parts = iterate(v, true, 20).map(([k, x]) => `${short(k)} => ${short(x)}`);
    return { name, type, size: plural(n, 'key', 'keys'), preview: join(parts, width, n > 20), members: n > 0 };
  }
  if (types.isSet(v)) {
    const n = ReflectApply(SetSize, v, []);
    const parts = iterate(v, false, 20).map(short);
    return { name, type, size: plural(n, 'item', 'items'), preview: join(parts, width, n > 20), members: n > 0 };
  }
  if (types.isDate(v)) {
    return { name, type, preview: safeString(() => ReflectApply(DateToISOString, v, []), 'Invalid Date') };
  }
  if (types.isRegExp(v)) {
    return { name, type, preview: `/${ReflectApply(RegExpSource, v, [])}/${ReflectApply(RegExpFlags, v, [])}` };
  }
  if (types.isPromise(v)) return { name, type };
  const own = ownEntries(v, 20, false);
  const line = { name, type, size: plural(own.total, 'key', 'keys'), members: own.total > 0 };
  if (isNativeError(v)) {
    const m = ObjectGetOwnPropertyDescriptor(v, 'message');
    line.preview = m && typeof m.value === 'string' ? m.value : '';
    return line;
  }
  line.preview = `{${join(own.entries.map(entryText), width - 2, own.total > own.entries.length)}}`;
  return line;
}

// parsePath reads a path: a name, then .name, [integer] or ["key"] /
// ['key'] — a small grammar, never evaluated.
function parsePath(path) {
  const bad = () => new LookError(`cannot read the path ${JSONStringify(path)}: a name, then .name, [0] or ["key"]`);
  let m = /^[A-Za-z_$][\w$]*/.exec(path);
  if (!m) throw bad();
  const steps = [m[0]];
  let rest = path.slice(m[0].length);
  while (rest !== '') {
    if ((m = /^\.([A-Za-z_$][\w$]*)/.exec(rest))) {
      steps.push(m[1]);
    } else if ((m = /^\[\s*(\d+)\s*\]/.exec(rest))) {
      steps.push(Number(m[1]));
    } else if ((m = /^\[\s*("(?:[^"\\]|\\.)*")\s*\]/.exec(rest))) {
      try {
        steps.push(JSON.parse(m[1]));
      } catch {
        throw bad();
      }
    } else if ((m = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest))) {
      steps.push(m[1].replace(/\\(.)/g, '$1'));
    } else {
      throw bad();
    }
    rest = rest.slice(m[0].length);
  }
  return steps;
}

// property is key's descriptor on v, own or inherited, read without
// running a getter.
function property(v, key) {
  for (let o = v; o !== null; o = ObjectGetPrototypeOf(o)) {
    if (isProxy(o)) throw new LookError('a Proxy is in the way: a look does not run its traps');
    const d = ObjectGetOwnPropertyDescriptor(o, key);
    if (d !== undefined) return d;
  }
  return undefined;
}

// follow is the value a path names.
function follow(path) {
  const steps = parsePath(path);
  const top = steps[0];
  const names = new NativeSet(lexicalNames);
  let d = ObjectHasOwn(globalThis, top) || names.has(top) ? binding(top) : undefined;
  if (d === undefined) throw new LookError(`${top} is not defined`);
  if (d.error !== undefined) throw new LookError(`Cannot access '${top}' before initialization`);
  let where = top;
  for (let i = 1; ; i++) {
    if (!ObjectHasOwn(d, 'value')) throw new LookError(`${where} is an accessor (a getter): a look does not call it`);
    const v = d.value;
    if (i === steps.length) return v;
    const key = steps[i];
    const next = typeof key === 'number' ? `${where}[${key}]` : identifier.test(key) ? `${where}.${key}` : `${where}[${JSONStringify(key)}]`;
    if (v === null || v === undefined) throw new LookError(`Cannot read properties of ${v} (reading '${StringFn(key)}'): ${where} is ${v}`);
    if (isProxy(v)) throw new LookError(`${where} is a Proxy: a look does not run its traps`);
    if (typeof v === 'object' && types.isMap(v) && ReflectApply(MapHas, v, [key])) {
      d = { value: ReflectApply(MapGet, v, [key]) };
    } else {
      d = typeof v === 'object' || typeof v === 'function' ? property(v, typeof key === 'number' ? StringFn(key) : key) : undefined;
      if (d === undefined) throw new LookError(`${where} has no property ${JSONStringify(StringFn(key))}`);
    }
    where = next;
  }
}

// members is the lines for what v holds: an array's items, a Map's
// entries, a Set's values, an object's own properties.
function members(v, path, a) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
    throw new LookError(`${path} is ${v === null ? 'null' : `a ${typeof v}`}: it has no members`);
  }
  if (isProxy(v)) throw new LookError(`${path} is a Proxy: a look does not run its traps`);
  const out = [];
  if (ArrayIsArray(v) || BufferIsBuffer(v) || types.isTypedArray(v)) {
    const n = ArrayIsArray(v) ? arrayLength(v) : ReflectApply(TypedArrayLength, v, []);
    for (let i = 0; i < n && i < a.limit; i++) {
      const d = ObjectGetOwnPropertyDescriptor(v, i);
      out.push(d === undefined ? { name: `[${i}]`, type: 'empty' } : lineOf(`[${i}]`, d, a));
    }
    return { vars: out, total: n };
  }
  if (types.isMap(v)) {
    for (const [k, x] of iterate(v, true, a.limit)) {
      out.push(lineOf(typeof k === 'string' ? k : short(k), { value: x }, a));
    }
    return { vars: out, total: ReflectApply(MapSize, v, []) };
  }
  if (types.isSet(v)) {
    const items = iterate(v, false, a.limit);
    for (let i = 0; i < items.length; i++) out.push(lineOf(`[${i}]`, { value: items[i] }, a));
    return { vars: out, total: ReflectApply(SetSize, v, []) };
  }
  const own = ownEntries(v, a.limit, a.all);
  for (const [k, d] of own.entries) out.push(lineOf(k, d, a));
  return { vars: out, total: own.total };
}

// cellLook is the look a cell's "done" carries, and the names from the
// same source.
function cellLook(result, code) {
  try {
    const found = names(code);
    result.names = found.slice(0, nameLimit);
    result.vars = linesFor(found, { limit: 100, width: 80 });
    result.vars_total = found.length;
  } catch {
    if (result.names === undefined) result.names = [];
  }
}
