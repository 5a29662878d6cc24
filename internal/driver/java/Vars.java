// polyrepl's Java worker, its looks (polyrepl vars). java.go appends this
// file to Worker.java (a source-file program is one file): it uses
// Worker.java's imports and has none of its own.

// PolyreplEngine is JShell's local engine with one thing more: while a
// look grabs a variable, varValue hands over the object the variable
// holds, read from its wrapper class's field as the engine reads it,
// instead of the object's toString. So a look reaches the object itself
// without creating a snippet (no $N, nothing in /vars) or calling its code.
class PolyreplEngine extends jdk.jshell.execution.LocalExecutionControl {
    private static boolean grabbing;
    private static Object grabbed;
    private static Throwable failed;

    @Override
    public String varValue(String className, String varName) throws jdk.jshell.spi.ExecutionControl.RunException,
            jdk.jshell.spi.ExecutionControl.EngineTerminationException, jdk.jshell.spi.ExecutionControl.InternalException {
        if (!grabbing) return super.varValue(className, varName);
        try {
            Field f = findClass(className).getDeclaredField(varName);
            f.setAccessible(true);
            grabbed = f.get(null);
        } catch (Throwable t) {
            failed = t;
        }
        return "";
    }

    // grab is the object v holds (v valid), read without calling its code.
    static Object grab(JShell js, VarSnippet v) {
        grabbing = true;
        grabbed = null;
        failed = null;
        try {
            js.varValue(v);
        } finally {
            grabbing = false;
        }
        Object o = grabbed;
        grabbed = null;
        if (failed != null) throw new IllegalStateException("cannot read " + v.name() + ": " + failed);
        return o;
    }
}

// PolyreplEngineProvider gives JShell the worker's engine.
class PolyreplEngineProvider implements jdk.jshell.spi.ExecutionControlProvider {
    public String name() {
        return "polyrepl-local";
    }

    public jdk.jshell.spi.ExecutionControl generate(jdk.jshell.spi.ExecutionEnv env, Map<String, String> parameters) {
        return new PolyreplEngine();
    }
}

// PolyreplQuiet is the worker's fd 1 and fd 2: it drops what threads of a
// look write (an object's toString, and any thread it starts), during the
// look and after it, so nothing a look calls prints into the session.
class PolyreplQuiet extends FilterOutputStream {
    PolyreplQuiet(OutputStream out) {
        super(out);
    }

    static boolean quiet() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        return g != null && PolyreplLook.GROUP.parentOf(g);
    }

    @Override
    public void write(int b) throws IOException {
        if (!quiet()) out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        if (!quiet()) out.write(b, off, len);
    }
}

// PolyreplLook answers polyrepl vars (the worker protocol's "vars"
// command, and the look a cell's "done" carries): the session's own names
// — JShell's active variables (not its $N temporaries), methods and types
// (with all: those, the $N and the imports) — or the members of what a
// path names (a.b a field, read by reflection and never by a getter; a[0]
// an array's or a java.util collection's item; m["k"] a java.util map's
// value). Known types are told from their structure: primitives and
// boxes, strings, arrays, the JDK's collections and maps (the classes of
// java.base, whose size and iteration run no session code), records,
// enums, lambdas. Any other object gets its fields, and, in a look
// between cells only, its own toString on a thread of the look's group
// (its output dropped), within 0.2 s and 1 s for the whole look: its
// exception or its time goes in note.
class PolyreplLook {
    // The look's threads' group, under the JVM's top group: not under a
    // cell's (JShell's engine waits for, and stops, its cell's group), as
    // it would be were this class first used by a cell's print.
    static final ThreadGroup GROUP = new ThreadGroup(top(), "polyrepl look");

    static ThreadGroup top() {
        ThreadGroup g = Thread.currentThread().getThreadGroup();
        while (g.getParent() != null) g = g.getParent();
        return g;
    }

    // The seconds all the toString calls of one look may take together:
    // the holder waits 10 s for a look.
    static final double BUDGET = 1.0;
    static final int ITEMS = 20; // items a preview reads at most
    static final int NAME = 200, TYPE = 120, SIZE = 80, NOTE = 200;

    final boolean live, all;
    final int limit, width;
    final double timeout;
    double budget = BUDGET;

    PolyreplLook(boolean live, boolean all, int limit, int width, double timeout) {
        this.live = live;
        this.all = all;
        this.limit = limit;
        this.width = width;
        this.timeout = timeout;
    }

    // PathError: the path names nothing; its message is the answer.
    static final class PathError extends Exception {
        PathError(String msg) {
            super(msg);
        }
    }

    // Line is one line of a look (api.Var).
    static final class Line {
        String name, type, size, preview, note;
        long memory;
        boolean members;

        Line(String name, String type) {
            this.name = name;
            this.type = type;
        }

        String json(int width) {
            StringBuilder b = new StringBuilder("{\"name\":").append(PolyreplWorker.json(fit(name, NAME)));
            b.append(",\"type\":").append(PolyreplWorker.json(fit(type, TYPE)));
            if (size != null) b.append(",\"size\":").append(PolyreplWorker.json(fit(size, SIZE)));
            if (memory > 0) b.append(",\"memory\":").append(memory);
            if (preview != null) b.append(",\"preview\":").append(PolyreplWorker.json(fit(preview, width)));
            if (note != null) b.append(",\"note\":").append(PolyreplWorker.json(fit(note, NOTE)));
            if (members) b.append(",\"members\":true");
            return b.append('}').toString();
        }
    }

    // Name is one of the session's names and the snippets behind it.
    record Name(String name, String kind, List<Snippet> snippets) {}

    // own is the session's names, sorted by name: its variables (with all:
    // the $N too), methods (overloads on one line), types, and with all
    // the imports.
    static List<Name> own(JShell js, boolean all) {
        List<Name> out = new ArrayList<>();
        js.variables().filter(v -> js.status(v).isActive() && (all || !v.name().startsWith("$")))
            .forEach(v -> out.add(new Name(v.name(), "var", List.of(v))));
        Map<String, List<Snippet>> methods = new LinkedHashMap<>();
        js.methods().filter(m -> js.status(m).isActive())
            .forEach(m -> methods.computeIfAbsent(m.name(), k -> new ArrayList<>()).add(m));
        methods.forEach((k, v) -> out.add(new Name(k, "method", v)));
        js.types().filter(t -> js.status(t).isActive()).forEach(t -> out.add(new Name(t.name(), "type", List.of(t))));
        if (all) js.imports().filter(i -> js.status(i).isActive()).forEach(i -> out.add(new Name(i.fullname(), "import", List.of(i))));
        out.sort(Comparator.comparing(Name::name));
        return out;
    }

    // cell is the look a cell's "done" carries (no toString: from
    // structure only), and the names from the same source: the event's
    // ,"names",… fields.
    static String cell(JShell js) {
        PolyreplLook look = new PolyreplLook(false, false, 100, 80, 0);
        List<Name> names = own(js, false);
        StringBuilder b = new StringBuilder(",\"names\":[");
        for (int i = 0; i < names.size() && i < 500; i++) b.append(i > 0 ? "," : "").append(PolyreplWorker.json(names.get(i).name()));
        b.append("],\"vars\":[");
        for (int i = 0; i < names.size() && i < look.limit; i++) b.append(i > 0 ? "," : "").append(look.nameLine(js, names.get(i)).json(look.width));
        return b.append("],\"vars_total\":").append(names.size()).toString();
    }

    // answer answers a "vars" command (its JSON arguments): the event's
    // "vars" and "total" fields, or its "error".
    static String answer(JShell js, String args) {
        try {
            Map<String, Object> a = new PolyreplJson(args).object();
            String path = a.get("path") instanceof String s ? s.strip() : "";
            PolyreplLook look = new PolyreplLook(true, Boolean.TRUE.equals(a.get("all")),
                (int) clamp(a.get("limit"), 100, 0, 10000), (int) clamp(a.get("preview"), 80, 10, 1000),
                clamp(a.get("timeout"), 0.2, 0.01, 5));
            List<Line> lines = new ArrayList<>();
            int total;
            if (path.isEmpty()) {
                List<Name> names = own(js, look.all);
                for (int i = 0; i < names.size() && i < look.limit; i++) lines.add(look.nameLine(js, names.get(i)));
                total = names.size();
            } else {
                total = PolyreplPath.members(look, PolyreplPath.follow(js, path), path, lines);
            }
            return "\"vars\":[" + lines.stream().map(l -> l.json(look.width)).collect(Collectors.joining(",")) + "],\"total\":" + total;
        } catch (PathError e) {
            return "\"error\":" + PolyreplWorker.json(fit(e.getMessage(), 2 * NOTE));
        } catch (Throwable t) {
            return "\"error\":" + PolyreplWorker.json(fit("the look failed: " + t, 2 * NOTE));
        }
    }

    static double clamp(Object v, double dflt, double lo, double hi) {
        double d = v instanceof Double x ? x : dflt;
        return Math.max(lo, Math.min(hi, d));
    }

    // nameLine is the line of one of the session's names.
    Line nameLine(JShell js, Name n) {
        Snippet sn = n.snippets().get(0);
        try {
            switch (n.kind()) {
                case "var" -> {
                    VarSnippet v = (VarSnippet) sn;
                    if (js.status(v) != Snippet.Status.VALID) {
                        Line l = new Line(n.name(), v.typeName());
                        l.note = waiting(js, v);
                        return l;
                    }
                    Line l = line(n.name(), PolyreplEngine.grab(js, v));
                    l.type = v.typeName();
                    return l;
                }
                case "method" -> {
                    Line l = new Line(n.name(), "method");
                    if (n.snippets().size() > 1) l.size = n.snippets().size() + " overloads";
                    l.preview = header(sn.source());
                    if (js.status(sn) != Snippet.Status.VALID) l.note = waiting(js, (DeclarationSnippet) sn);
                    return l;
                }
                case "type" -> {
                    Line l = new Line(n.name(), switch (sn.subKind()) {
                        case INTERFACE_SUBKIND -> "interface";
                        case ENUM_SUBKIND -> "enum";
                        case ANNOTATION_TYPE_SUBKIND -> "@interface";
                        default -> sn.subKind().name().startsWith("RECORD") ? "record" : "class";
                    });
                    l.preview = header(sn.source());
                    if (js.status(sn) != Snippet.Status.VALID) l.note = waiting(js, (DeclarationSnippet) sn);
                    return l;
                }
                default -> {
                    Line l = new Line(n.name(), "import");
                    l.preview = flat(sn.source().strip());
                    return l;
                }
            }
        } catch (Throwable t) {
            Line l = new Line(n.name(), n.kind());
            l.note = "cannot look: " + t;
            return l;
        }
    }

    static String waiting(JShell js, DeclarationSnippet d) {
        List<String> u = js.unresolvedDependencies(d).collect(Collectors.toList());
        return u.isEmpty() ? "not usable: " + js.status(d) : "cannot be used until " + String.join(", ", u) + " is declared";
    }

    // header is a declaration's source up to its body.
    static String header(String src) {
        int i = src.indexOf('{');
        return flat((i < 0 ? src : src.substring(0, i)).strip());
    }

    // line is the line of object o under name.
    Line line(String name, Object o) {
        return line(name, o, null);
    }

    // line is the line of object o under name, held where declared is a
    // primitive type (a field's, an array's component): that type, not its box.
    Line line(String name, Object o, Class<?> declared) {
        String type = declared != null && declared.isPrimitive() ? declared.getName() : o == null ? "null" : typeName(o.getClass());
        Line l = new Line(name, type);
        try {
            describe(l, o);
        } catch (Throwable t) {
            l.note = "cannot look: " + t;
        }
        return l;
    }

    void describe(Line l, Object o) throws Exception {
        if (o == null) {
            l.preview = "null";
            return;
        }
        Class<?> c = o.getClass();
        if (o instanceof String s) {
            int n = s.length() <= 1_000_000 ? s.codePointCount(0, s.length()) : s.length();
            l.size = plural(n, "character", "characters");
            l.preview = literal(s, width);
        } else if (box(c)) {
            l.preview = shortOf(o);
        } else if (c.isArray()) {
            int n = java.lang.reflect.Array.getLength(o);
            Class<?> e = c.getComponentType();
            l.size = plural(n, "item", "items");
            if (e.isPrimitive()) l.memory = (16 + (long) n * primitiveBytes(e) + 7) / 8 * 8;
            List<String> parts = new ArrayList<>();
            for (int i = 0; i < n && i < ITEMS; i++) parts.add(shortOf(java.lang.reflect.Array.get(o, i)));
            l.preview = "[" + join(parts, width - 2, n > ITEMS) + "]";
            l.members = n > 0;
        } else if (o instanceof Enum<?> e) {
            l.preview = e.name();
        } else if (container(c) && o instanceof Map<?, ?> m) {
            int n = m.size();
            List<String> parts = new ArrayList<>();
            for (Map.Entry<?, ?> en : m.entrySet()) {
                if (parts.size() >= ITEMS) break;
                parts.add(shortOf(en.getKey()) + "=" + shortOf(en.getValue()));
            }
            l.size = plural(n, "key", "keys");
            l.preview = "{" + join(parts, width - 2, n > ITEMS) + "}";
            l.members = n > 0;
        } else if (container(c) && o instanceof Collection<?> co) {
            int n = co.size();
            List<String> parts = new ArrayList<>();
            for (Object x : co) {
                if (parts.size() >= ITEMS) break;
                parts.add(shortOf(x));
            }
            l.size = plural(n, "item", "items");
            l.preview = "[" + join(parts, width - 2, n > ITEMS) + "]";
            l.members = n > 0;
        } else if (jdk(c) && o instanceof CharSequence cs) {
            int n = cs.length();
            l.size = plural(n, "character", "characters");
            l.preview = literal(cs.subSequence(0, Math.min(n, width)).toString(), width);
        } else if (jdk(c) && o instanceof Optional<?> op) {
            l.preview = op.isPresent() ? "Optional[" + shortOf(op.get()) + "]" : "Optional.empty";
        } else if (o instanceof Class<?> k) {
            l.preview = (k.isInterface() ? "interface " : "class ") + typeName(k);
        } else if (safeText(o)) {
            l.preview = flat(o.toString());
        } else if (c.isRecord()) {
            RecordComponent[] rc = c.getRecordComponents();
            List<String> parts = new ArrayList<>();
            for (int i = 0; i < rc.length && i < ITEMS; i++) parts.add(rc[i].getName() + "=" + shortOf(field(o, c, rc[i].getName())));
            l.size = plural(rc.length, "component", "components");
            l.preview = typeName(c) + "[" + join(parts, width - typeName(c).length() - 2, rc.length > ITEMS) + "]";
            l.members = rc.length > 0;
        } else if (lambda(c)) {
            l.preview = "lambda";
        } else {
            // Not known: its own fields (the session's classes), and its
            // toString, timed, in a look between cells.
            List<Field> fs = fields(c);
            List<String> parts = new ArrayList<>();
            for (int i = 0; i < fs.size() && i < ITEMS; i++) parts.add(fs.get(i).getName() + "=" + shortOf(fs.get(i).get(o)));
            if (!parts.isEmpty()) l.preview = join(parts, width, fs.size() > ITEMS);
            l.members = !fs.isEmpty();
            if (live) timed(l, o);
        }
    }

    // timed is o's own toString (and size, for a collection or map of a
    // class not the JDK's), on a thread of the look's group, within the
    // look's timeout and what is left of its budget; its output is dropped
    // (PolyreplQuiet).
    void timed(Line l, Object o) {
        boolean own;
        try {
            own = o.getClass().getMethod("toString").getDeclaringClass() != Object.class;
        } catch (NoSuchMethodException e) {
            own = false;
        }
        boolean overridden = own;
        boolean sized = o instanceof Collection<?> || o instanceof Map<?, ?>;
        if (!overridden && !sized) return; // Object's: its class and hash, asked of hashCode
        if (budget <= 0) {
            l.note = "the look's time for previews (" + BUDGET + " s) ran out: no toString";
            return;
        }
        double limit = Math.min(timeout, budget);
        String[] res = new String[3];
        Thread t = new Thread(GROUP, () -> {
            try {
                if (o instanceof Collection<?> co) res[1] = plural(co.size(), "item", "items");
                if (o instanceof Map<?, ?> m) res[1] = plural(m.size(), "key", "keys");
                if (overridden) res[0] = String.valueOf(o.toString());
            } catch (Throwable x) {
                String msg;
                try {
                    msg = x.getMessage();
                } catch (Throwable y) {
                    msg = null;
                }
                res[2] = "toString threw " + x.getClass().getSimpleName() + (msg == null ? "" : ": " + msg);
            }
        }, "polyrepl-look");
        t.setDaemon(true);
        t.start();
        long start = System.nanoTime(); // (the first start of a look's thread can take 0.3 s on a busy machine)
        try {
            t.join(Math.max(1, (long) (limit * 1000)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        budget -= (System.nanoTime() - start) / 1e9;
        if (t.isAlive()) {
            stop(t);
            l.note = limit < timeout ? "the look's time for previews (" + BUDGET + " s) ran out during toString"
                : "toString took over " + timeout + " s";
            return;
        }
        if (res[1] != null) l.size = res[1];
        if (res[2] != null) l.note = res[2];
        else if (res[0] != null) l.preview = fit(flat(res[0]), width);
    }

    // stop ends a look's thread that ran out of time: Thread.stop where the
    // JVM still has it (before Java 20), else it is interrupted and left
    // to end, a daemon whose output goes nowhere.
    @SuppressWarnings({"deprecation", "removal"})
    static void stop(Thread t) {
        t.interrupt();
        try {
            Thread.class.getMethod("stop").invoke(t);
        } catch (Throwable e) {
            // Java 20 and later: UnsupportedOperationException
        }
    }

    // fields is the instance fields of c and its superclasses, up to the
    // JDK's (which java.base does not open), made readable.
    static List<Field> fields(Class<?> c) {
        List<Field> out = new ArrayList<>();
        for (Class<?> k = c; k != null && !jdk(k); k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) continue;
                try {
                    f.setAccessible(true);
                    out.add(f);
                } catch (RuntimeException e) {
                    // a class of a module that does not open it: not read
                }
            }
        }
        return out;
    }

    static Object field(Object o, Class<?> c, String name) {
        try {
            Field f = c.getDeclaredField(name);
            f.setAccessible(true);
            return f.get(o);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    // jdk: a class of the JDK's own modules.
    static boolean jdk(Class<?> c) {
        Module m = c.getModule();
        return m.isNamed() && m.getName().startsWith("java.");
    }

    // container: a JDK collection or map whose size and iteration run no
    // code of the session's (not the Collections wrappers or the
    // AbstractMap/AbstractList views around a collection of any class).
    static boolean container(Class<?> c) {
        if (!jdk(c)) return false;
        String n = c.getName();
        if (n.startsWith("java.util.Collections$")) return n.contains("Empty") || n.contains("Singleton");
        return !n.startsWith("java.util.AbstractMap$") && !n.startsWith("java.util.AbstractList$");
    }

    static boolean box(Class<?> c) {
        return c == Integer.class || c == Long.class || c == Double.class || c == Float.class || c == Short.class
            || c == Byte.class || c == Character.class || c == Boolean.class;
    }

    static boolean lambda(Class<?> c) {
        return c.isHidden() || c.getName().contains("$$Lambda");
    }

    // safeText: a JDK value whose toString reads only itself.
    static boolean safeText(Object o) {
        Class<?> c = o.getClass();
        if (!jdk(c)) return false;
        String n = c.getName();
        if (o instanceof java.math.BigInteger b) return b.bitLength() < 4000;
        if (o instanceof java.math.BigDecimal d) return d.unscaledValue().bitLength() < 4000 && Math.abs(d.scale()) < 1000;
        return n.startsWith("java.time.") || o instanceof UUID || o instanceof File || o instanceof java.net.URI
            || o instanceof java.nio.file.Path || o instanceof java.util.regex.Pattern || o instanceof Locale
            || n.equals("java.util.concurrent.atomic.AtomicInteger") || n.equals("java.util.concurrent.atomic.AtomicLong")
            || n.equals("java.util.concurrent.atomic.AtomicBoolean") || o instanceof java.nio.charset.Charset;
    }

    static int primitiveBytes(Class<?> e) {
        if (e == long.class || e == double.class) return 8;
        if (e == int.class || e == float.class) return 4;
        if (e == short.class || e == char.class) return 2;
        return 1;
    }

    // typeName is a class as Java code names it: Point (not the JShell
    // wrapper's REPL.$JShell$12$Point), int[], and for the JDK's hidden
    // implementations the interface (List for List.of's).
    static String typeName(Class<?> c) {
        if (c.isArray()) return typeName(c.getComponentType()) + "[]";
        if (jdk(c) && !Modifier.isPublic(c.getModifiers())) {
            for (Class<?> i : new Class<?>[] {List.class, Set.class, Map.class, Deque.class, Queue.class, Collection.class, Map.Entry.class}) {
                if (i.isAssignableFrom(c)) return i == Map.Entry.class ? "Map.Entry" : i.getSimpleName();
            }
        }
        if (lambda(c)) {
            Class<?>[] is = c.getInterfaces();
            return is.length > 0 ? typeName(is[0]) : "lambda";
        }
        String s = c.getSimpleName();
        if (!s.isEmpty()) return s;
        return c.getName().replaceFirst("^REPL\\.\\$JShell\\$\\d+\\$", "");
    }

    // shortOf is a value in a few characters, from its structure.
    static String shortOf(Object o) {
        if (o == null) return "null";
        Class<?> c = o.getClass();
        if (o instanceof String s) return literal(s, 24);
        if (o instanceof Character ch) return "'" + escape(String.valueOf(ch), '\'') + "'";
        if (box(c)) return o.toString();
        if (o instanceof Enum<?> e) return e.name();
        if (c.isArray()) return typeName(c.getComponentType()) + "[" + java.lang.reflect.Array.getLength(o) + "]";
        if (container(c) && o instanceof Map<?, ?> m) return "{" + plural(m.size(), "key", "keys") + "}";
        if (container(c) && o instanceof Collection<?> co) return "[" + plural(co.size(), "item", "items") + "]";
        return typeName(c);
    }

    // keyName is a map's key as a path writes it: "k", 1, else its shortOf.
    static String keyName(Object k) {
        if (k instanceof String s) return "\"" + escape(s, '"') + "\"";
        return shortOf(k);
    }

    static String plural(long n, String one, String many) {
        return n + " " + (n == 1 ? one : many);
    }

    // literal is s as a Java string literal, cut to width characters.
    static String literal(String s, int width) {
        String head = s.length() > width * 2 ? s.substring(0, width * 2) : s;
        return fit("\"" + escape(head, '"') + (head.length() < s.length() ? "…" : "\""), width);
    }

    static String escape(String s, char quote) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                case '\r' -> b.append("\\r");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c == quote) b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.toString();
    }

    // flat is text on one line, its runs of white space one space.
    static String flat(String s) {
        if (s.length() > 4000) s = s.substring(0, 4000);
        return s.replaceAll("\\s+", " ").strip();
    }

    // fit is s cut to n characters (code points), the cut said with "…".
    static String fit(String s, int n) {
        if (s == null) return "";
        if (s.length() <= n) return s;
        int cps = s.codePointCount(0, s.length());
        if (cps <= n) return s;
        return s.substring(0, s.offsetByCodePoints(0, n - 1)) + "…";
    }

    // join is parts joined by ", " within width, "…" for the rest.
    static String join(List<String> parts, int width, boolean more) {
        StringBuilder b = new StringBuilder();
        for (String p : parts) {
            int add = (b.length() > 0 ? 2 : 0) + p.length();
            if (b.length() + add > width - 3) return b.length() == 0 ? "…" : b + ", …";
            if (b.length() > 0) b.append(", ");
            b.append(p);
        }
        if (more) return b.length() == 0 ? "…" : b + ", …";
        return b.toString();
    }
}
