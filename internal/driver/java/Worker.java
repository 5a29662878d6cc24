// polyrepl's Java worker: JShell's own engine (jdk.jshell), in this JVM,
// evaluating each cell snippet by snippet as the jshell tool does, over
// polyrepl's worker protocol (see internal/driver/worker): cells on fd 3,
// events on fd 4, everything printed on fd 1 and fd 2, then the sentinel.
import java.io.*;
import java.lang.reflect.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.stream.*;
import jdk.jshell.*;
import jdk.jshell.SourceCodeAnalysis.Completeness;

class PolyreplWorker {
    static PrintStream out, err;
    static OutputStream events;
    static JShell js;
    static volatile boolean running, interrupted;

    // The imports the jshell tool starts with (its DEFAULT startup).
    static final String[] IMPORTS = {
        "java.io.*", "java.math.*", "java.net.*", "java.nio.file.*", "java.util.*",
        "java.util.concurrent.*", "java.util.function.*", "java.util.prefs.*",
        "java.util.regex.*", "java.util.stream.*",
    };

    public static void main(String[] args) throws Exception {
        // The end marker comes in the environment (older daemons: the last
        // argument); a JVM cannot take it out of its own environment, so
        // a cell's child processes inherit it, but ps does not show it.
        String sentinel = System.getenv("POLYREPL_WORKER_SENTINEL");
        if (sentinel == null || sentinel.isEmpty()) sentinel = args[args.length - 1];
        // What a look's threads print goes nowhere (PolyreplQuiet, Vars.java).
        out = new PrintStream(new PolyreplQuiet(new FileOutputStream(FileDescriptor.out)), true, StandardCharsets.UTF_8);
        err = new PrintStream(new PolyreplQuiet(new FileOutputStream(FileDescriptor.err)), true, StandardCharsets.UTF_8);
        System.setOut(out);
        System.setErr(err);
        // Standard input is the session's console: a cell's read of it
        // asks (the daemon sees the read).
        InputStream in = new FileInputStream(FileDescriptor.in);
        System.setIn(in);
        InputStream cmds = new BufferedInputStream(new FileInputStream("/dev/fd/3"));
        events = new FileOutputStream("/dev/fd/4");

        // JShell's local engine, which also hands a look the objects the
        // variables hold (PolyreplEngine, Vars.java).
        js = JShell.builder().executionEngine(new PolyreplEngineProvider(), null).out(out).err(err)
            .in(in).build();
        for (String imp : IMPORTS) js.eval("import " + imp + ";");
        // A first evaluation loads the compiler, so the first cell is quick.
        for (SnippetEvent e : js.eval("int polyreplWarmUp = 0;")) js.drop(e.snippet());

        sun.misc.Signal.handle(new sun.misc.Signal("INT"), s -> {
            if (running) {
                interrupted = true;
                js.stop();
            }
        });
        send("{\"op\":\"hello\",\"version\":" + json(System.getProperty("java.version"))
            + ",\"executable\":" + json(ProcessHandle.current().info().command().orElse(""))
            + ",\"pid\":" + ProcessHandle.current().pid() + "}");

        while (true) {
            String header = readLine(cmds);
            if (header == null) return;
            String[] f = header.split(" ");
            if (f.length == 3 && f[0].equals("vars")) {
                // A look between cells (polyrepl vars): it prints nothing.
                String query = new String(cmds.readNBytes(Integer.parseInt(f[1])), StandardCharsets.UTF_8);
                String body;
                try {
                    body = PolyreplLook.answer(js, query);
                } catch (Throwable t) {
                    body = "\"error\":" + json("the look failed: " + t);
                }
                send("{\"op\":\"vars\",\"nonce\":" + json(f[2]) + "," + body + "}");
                continue;
            }
            if ((f.length != 4 && f.length != 5) || !f[0].equals("exec")) continue;
            // The exec's nonce, echoed so the daemon takes no event a cell forged.
            String nonce = f.length == 5 && f[4].matches("[0-9A-Za-z]+") ? f[4] : null;
            int cell = Integer.parseInt(f[1]);
            int limit = Integer.parseInt(f[2]);
            byte[] code = cmds.readNBytes(Integer.parseInt(f[3]));
            String done = run(cell, limit, new String(code, StandardCharsets.UTF_8), nonce);
            out.flush();
            err.flush();
            boolean flushed = true;
            try {
                out.print(sentinel);
                out.flush();
            } catch (Exception e) {
                flushed = false;
            }
            send(done + ",\"flushed\":" + flushed + "}");
        }
    }

    // run evaluates a cell and returns its done event, without the closing brace.
    // run runs a cell and returns its "done" event but its end: the cell,
    // the nonce and the status first, which the daemon reads from the
    // head of an event too long to take.
    static String run(int cell, int limit, String code, String nonce) {
        String status = "done", value = null, name = null, error = null;
        interrupted = false;
        running = true;
        try {
            String rest = code;
            SourceCodeAnalysis sca = js.sourceCodeAnalysis();
            while (!rest.isBlank()) {
                SourceCodeAnalysis.CompletionInfo ci = sca.analyzeCompletion(rest);
                String src = ci.source();
                if (src == null || ci.completeness() == Completeness.DEFINITELY_INCOMPLETE
                        || ci.completeness() == Completeness.CONSIDERED_INCOMPLETE) {
                    src = rest; // let the compiler say what is missing
                    rest = "";
                } else {
                    rest = ci.remaining();
                }
                if (src.isBlank()) continue;
                value = name = null;
                for (SnippetEvent e : js.eval(src)) {
                    if (e.causeSnippet() != null) continue;
                    if (interrupted) break;
                    if (e.exception() != null) {
                        error = exception(e.exception());
                        break;
                    }
                    if (e.status() == Snippet.Status.REJECTED) {
                        error = rejected(e.snippet());
                        break;
                    }
                    Snippet sn = e.snippet();
                    if (sn instanceof VarSnippet v && e.value() != null && !v.typeName().equals("void")) {
                        boolean expr = sn.kind() == Snippet.Kind.EXPRESSION || sn.subKind() == Snippet.SubKind.TEMP_VAR_EXPRESSION_SUBKIND;
                        if (expr || sn.subKind() == Snippet.SubKind.VAR_DECLARATION_WITH_INITIALIZER_SUBKIND) {
                            value = e.value();
                            name = v.name();
                        }
                    } else if (sn instanceof ExpressionSnippet x && e.value() != null && !x.typeName().equals("void")) {
                        value = e.value();
                        name = x.name();
                    }
                    for (String d : unresolved(sn, e)) err.println(d);
                }
                if (interrupted || error != null) break;
            }
        } catch (Throwable t) {
            error = error(t.getClass().getName(), String.valueOf(t.getMessage()), null);
        } finally {
            running = false;
        }
        StringBuilder b = new StringBuilder();
        if (interrupted) {
            status = "interrupted";
            value = null;
        } else if (error != null) {
            status = "error";
            value = null;
            b.append(",\"error\":").append(error);
        }
        if (value != null) {
            b.append(",\"value_name\":").append(json(name));
            int n = value.codePointCount(0, value.length());
            if (limit > 0 && n > limit) {
                int head = limit / 2, tail = limit - head;
                b.append(",\"value_head\":").append(json(value.substring(0, value.offsetByCodePoints(0, head))));
                b.append(",\"value_tail\":").append(json(value.substring(value.offsetByCodePoints(0, n - tail))));
                b.append(",\"value_total\":").append(n);
            } else {
                b.append(",\"value\":").append(json(value));
            }
        }
        // The names, and the look at them they come from (Vars.java).
        try {
            b.append(PolyreplLook.cell(js));
        } catch (Throwable t) {
            String names = "";
            try {
                names = PolyreplLook.own(js, false).stream().map(n -> json(n.name())).distinct().collect(Collectors.joining(","));
            } catch (Throwable u) {
                // no names rather than no result
            }
            b.append(",\"names\":[").append(names).append(']');
        }
        return "{\"op\":\"done\",\"cell\":" + cell + (nonce != null ? ",\"nonce\":\"" + nonce + "\"" : "")
            + ",\"status\":\"" + status + "\"" + b;
    }

    // exception returns the error object of a failed snippet, its
    // traceback as jshell prints it.
    static String exception(JShellException x) {
        String type = x instanceof EvalException ee ? ee.getExceptionClassName() : x.getClass().getSimpleName();
        String msg = x.getMessage() == null ? "" : x.getMessage();
        StringBuilder tb = new StringBuilder("|  Exception " + type + (msg.isEmpty() ? "" : ": " + msg) + "\n");
        for (StackTraceElement el : x.getStackTrace()) {
            String cls = el.getClassName();
            if (cls.startsWith("jdk.jshell.") || cls.startsWith("jdk.internal.") || cls.startsWith("java.lang.reflect.")) break;
            String where = el.getFileName() != null && el.getFileName().startsWith("#")
                ? (el.getMethodName().isEmpty() || el.getMethodName().equals("do_it$") ? "" : el.getMethodName() + " ") + "(" + el.getFileName() + ":" + el.getLineNumber() + ")"
                : el.toString();
            tb.append("|        at ").append(where).append('\n');
        }
        if (x instanceof UnresolvedReferenceException ure) {
            msg = "attempted to use " + describe(ure.getSnippet()) + " which cannot be used until its unresolved references are declared";
        }
        return error(type, msg, tb.toString());
    }

    // rejected returns the error object of a snippet that did not compile,
    // its traceback the errors as jshell prints them.
    static String rejected(Snippet sn) {
        StringBuilder msg = new StringBuilder();
        StringBuilder tb = new StringBuilder();
        String src = sn.source();
        for (Diag d : js.diagnostics(sn).collect(Collectors.toList())) {
            if (!d.isError()) continue;
            String m = d.getMessage(Locale.ROOT);
            if (msg.length() == 0) msg.append(m);
            tb.append("|  Error:\n");
            for (String l : m.split("\n")) tb.append("|  ").append(l).append('\n');
            long pos = Math.max(0, Math.min(d.getStartPosition(), src.length()));
            int ls = src.lastIndexOf('\n', (int) pos - 1) + 1;
            int le = src.indexOf('\n', (int) pos);
            if (le < 0) le = src.length();
            tb.append("|  ").append(src, ls, le).append('\n');
            long end = Math.max(pos + 1, Math.min(d.getEndPosition(), le));
            tb.append("|  ").append(" ".repeat((int) pos - ls)).append("^").append("-".repeat((int) Math.max(0, end - pos - 2))).append(end - pos > 1 ? "^" : "").append('\n');
        }
        if (msg.length() == 0) msg.append("the snippet was rejected: ").append(src.strip());
        return error("CompileError", msg.toString(), tb.toString());
    }

    // Bounds of a cell's error in the "done" event, in characters, as the
    // Python worker's: an exception's message can be of any size, and the
    // event must stay small enough for the daemon to take it whole.
    static final int MESSAGE_LIMIT = 10000, TRACEBACK_LIMIT = 30000, TYPE_LIMIT = 200;

    // error is an error object, each text cut to its bound with the cut
    // said and its length given (traceback null: none).
    static String error(String type, String msg, String tb) {
        StringBuilder b = new StringBuilder("{\"type\":").append(json(cut(type, TYPE_LIMIT, " ")));
        b.append(",\"message\":").append(json(cut(msg, MESSAGE_LIMIT, "\n")));
        if (msg.length() > MESSAGE_LIMIT) b.append(",\"message_total\":").append(msg.length());
        if (tb != null) {
            b.append(",\"traceback\":").append(json(cut(tb, TRACEBACK_LIMIT, "\n")));
            if (tb.length() > TRACEBACK_LIMIT) b.append(",\"traceback_total\":").append(tb.length());
        }
        return b.append('}').toString();
    }

    // cut is text, or its head and tail with the cut said between them,
    // as the daemon's bound.Marker says it.
    static String cut(String text, int limit, String sep) {
        if (text.length() <= limit) return text;
        int head = limit / 2, tail = limit - head, n = text.length() - limit;
        String count = n == 1 ? "1 character" : String.format(Locale.ROOT, "%,d characters", n);
        return text.substring(0, head) + sep + "[\u2026 " + count + " cut \u2026]" + sep + text.substring(text.length() - tail);
    }

    // unresolved says what a declaration still needs, as jshell does.
    static List<String> unresolved(Snippet sn, SnippetEvent e) {
        if (!(sn instanceof DeclarationSnippet ds) || e.status() != Snippet.Status.RECOVERABLE_DEFINED && e.status() != Snippet.Status.RECOVERABLE_NOT_DEFINED) {
            return List.of();
        }
        List<String> u = js.unresolvedDependencies(ds).collect(Collectors.toList());
        if (u.isEmpty()) return List.of();
        return List.of("|  created " + describe(sn) + ", however, it cannot be used until " + String.join(", ", u) + " is declared");
    }

    static String describe(Snippet sn) {
        if (sn instanceof MethodSnippet m) return "method " + m.name() + "(" + m.parameterTypes() + ")";
        if (sn instanceof TypeDeclSnippet t) return "type " + t.name();
        if (sn instanceof VarSnippet v) return "variable " + v.name();
        return "snippet " + sn.id();
    }

    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1 && c != '\n') b.write(c);
        if (c == -1 && b.size() == 0) return null;
        return b.toString(StandardCharsets.UTF_8);
    }

    static void send(String line) throws IOException {
        events.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        events.flush();
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
