// polyrepl's Java worker, its looks' paths (polyrepl vars). java.go
// appends this file to Worker.java and Vars.java (a source-file program is
// one file): it uses Worker.java's imports and has none of its own.

// PolyreplPath reads what a look's path names (a.b a field, read by
// reflection and never by a getter; a[0] an array's or a java.util
// collection's item; m["k"] a java.util map's value) and lists its members.
class PolyreplPath {
    // Step is one step of a path after its variable: .field (key a
    // String, field true), [index] (an Integer) or ["key"] (a String).
    record Step(int end, boolean field, Object key) {}

    // follow is the object a path names: a variable, then .field,
    // [index] or ["key"] — a small grammar, read whole before anything is
    // looked up, never evaluated.
    static Object follow(JShell js, String path) throws PolyreplLook.PathError {
        PolyreplLook.PathError bad = new PolyreplLook.PathError("cannot read the path " + PolyreplLook.literal(path, 60)
            + ": a variable, then .field, [index] or [\"key\"]");
        int[] at = {0};
        String head = ident(path, at);
        if (head == null) throw bad;
        int headEnd = at[0];
        List<Step> steps = new ArrayList<>();
        while (at[0] < path.length()) {
            char ch = path.charAt(at[0]);
            if (ch == '.') {
                at[0]++;
                String f = ident(path, at);
                if (f == null) throw bad;
                steps.add(new Step(at[0], true, f));
            } else if (ch == '[') {
                at[0]++;
                skip(path, at);
                Object key;
                if (at[0] < path.length() && path.charAt(at[0]) == '"') {
                    key = string(path, at);
                    if (key == null) throw bad;
                } else {
                    int s = at[0];
                    if (at[0] < path.length() && path.charAt(at[0]) == '-') at[0]++;
                    while (at[0] < path.length() && Character.isDigit(path.charAt(at[0]))) at[0]++;
                    try {
                        key = Integer.parseInt(path.substring(s, at[0]));
                    } catch (NumberFormatException e) {
                        throw bad;
                    }
                }
                skip(path, at);
                if (at[0] >= path.length() || path.charAt(at[0]) != ']') throw bad;
                at[0]++;
                steps.add(new Step(at[0], false, key));
            } else {
                throw bad;
            }
        }
        VarSnippet v = js.variables().filter(x -> js.status(x).isActive() && x.name().equals(head)).findFirst()
            .orElseThrow(() -> new PolyreplLook.PathError("cannot find symbol: variable " + head));
        if (js.status(v) != Snippet.Status.VALID) throw new PolyreplLook.PathError("variable " + head + " " + PolyreplLook.waiting(js, v));
        Object o = PolyreplEngine.grab(js, v);
        int from = headEnd;
        for (Step st : steps) {
            String where = path.substring(0, from);
            if (st.field()) o = member(o, (String) st.key(), where);
            else o = st.key() instanceof Integer i ? item(o, i, where) : value(o, st.key(), where);
            from = st.end();
        }
        return o;
    }

    static String ident(String s, int[] at) {
        int i = at[0];
        if (i >= s.length() || !Character.isJavaIdentifierStart(s.codePointAt(i))) return null;
        i += Character.charCount(s.codePointAt(i));
        while (i < s.length() && Character.isJavaIdentifierPart(s.codePointAt(i))) i += Character.charCount(s.codePointAt(i));
        String id = s.substring(at[0], i);
        at[0] = i;
        return id;
    }

    static void skip(String s, int[] at) {
        while (at[0] < s.length() && s.charAt(at[0]) == ' ') at[0]++;
    }

    // string reads a Java string literal at at: its value, or null.
    static String string(String s, int[] at) {
        StringBuilder b = new StringBuilder();
        for (int i = at[0] + 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                at[0] = i + 1;
                return b.toString();
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (++i >= s.length()) return null;
            switch (s.charAt(i)) {
                case 'n' -> b.append('\n');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case '0' -> b.append('\0');
                case 'u' -> {
                    if (i + 4 >= s.length()) return null;
                    try {
                        b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                    } catch (NumberFormatException e) {
                        return null;
                    }
                    i += 4;
                }
                default -> b.append(s.charAt(i));
            }
        }
        return null;
    }

    // member is o's field f (an array's length), read by reflection.
    static Object member(Object o, String f, String where) throws PolyreplLook.PathError {
        if (o == null) throw new PolyreplLook.PathError(where + " is null");
        Class<?> c = o.getClass();
        if (c.isArray() && f.equals("length")) return java.lang.reflect.Array.getLength(o);
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            for (Field fd : k.getDeclaredFields()) {
                if (!fd.getName().equals(f)) continue;
                try {
                    fd.setAccessible(true);
                    return fd.get(Modifier.isStatic(fd.getModifiers()) ? null : o);
                } catch (RuntimeException | IllegalAccessException e) {
                    throw new PolyreplLook.PathError(where + "." + f + " is a field of " + k.getName() + ", which "
                        + k.getModule().getName() + " does not open to a look");
                }
            }
        }
        throw new PolyreplLook.PathError("cannot find symbol: variable " + f + ", location: " + where + " of type " + PolyreplLook.typeName(c));
    }

    // item is o[i]: an array's item, a JDK collection's.
    static Object item(Object o, int i, String where) throws PolyreplLook.PathError {
        if (o == null) throw new PolyreplLook.PathError(where + " is null");
        Class<?> c = o.getClass();
        if (c.isArray()) {
            int n = java.lang.reflect.Array.getLength(o);
            if (i < 0 || i >= n) throw new PolyreplLook.PathError("Index " + i + " out of bounds for length " + n);
            return java.lang.reflect.Array.get(o, i);
        }
        if (PolyreplLook.container(c) && o instanceof List<?> l) {
            int n = l.size();
            if (i < 0 || i >= n) throw new PolyreplLook.PathError("Index " + i + " out of bounds for length " + n);
            return l.get(i);
        }
        if (PolyreplLook.container(c) && o instanceof Collection<?> co) {
            int n = co.size();
            if (i < 0 || i >= n) throw new PolyreplLook.PathError("Index " + i + " out of bounds for length " + n);
            Iterator<?> it = co.iterator();
            for (int k = 0; k < i; k++) it.next();
            return it.next();
        }
        if (PolyreplLook.container(c) && o instanceof Map<?, ?>) return value(o, i, where);
        throw new PolyreplLook.PathError("array required, but " + PolyreplLook.typeName(c) + " found (" + where + ")");
    }

    // value is a JDK map's value under key: the entries are walked and the
    // key (a String or an Integer) compared with its own equals, so no
    // hashCode, equals or comparator of the session's runs.
    static Object value(Object o, Object key, String where) throws PolyreplLook.PathError {
        if (o == null) throw new PolyreplLook.PathError(where + " is null");
        if (!(PolyreplLook.container(o.getClass()) && o instanceof Map<?, ?> m)) {
            throw new PolyreplLook.PathError(where + " is a " + PolyreplLook.typeName(o.getClass()) + ": a look reads [\"key\"] of java.util maps only");
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (key.equals(e.getKey())) return e.getValue();
        }
        throw new PolyreplLook.PathError("key not found in " + where + ": " + (key instanceof String s ? PolyreplLook.literal(s, 60) : key));
    }

    // members adds the lines of what o holds to lines, and is how many
    // there are: an array's or collection's items, a map's keys, a
    // record's components, an object's fields.
    static int members(PolyreplLook look, Object o, String path, List<PolyreplLook.Line> lines) throws PolyreplLook.PathError {
        if (o == null) throw new PolyreplLook.PathError(path + " is null: it has no members");
        Class<?> c = o.getClass();
        if (c.isArray()) {
            int n = java.lang.reflect.Array.getLength(o);
            for (int i = 0; i < n && i < look.limit; i++) lines.add(look.line("[" + i + "]", java.lang.reflect.Array.get(o, i), c.getComponentType()));
            return n;
        }
        if (PolyreplLook.container(c) && o instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (lines.size() >= look.limit) break;
                lines.add(look.line(PolyreplLook.keyName(e.getKey()), e.getValue()));
            }
            return m.size();
        }
        if (PolyreplLook.container(c) && o instanceof Collection<?> co) {
            for (Object x : co) {
                if (lines.size() >= look.limit) break;
                lines.add(look.line("[" + lines.size() + "]", x));
            }
            return co.size();
        }
        if (c.isRecord()) {
            RecordComponent[] rc = c.getRecordComponents();
            for (int i = 0; i < rc.length && i < look.limit; i++) lines.add(look.line(rc[i].getName(), PolyreplLook.field(o, c, rc[i].getName()), rc[i].getType()));
            return rc.length;
        }
        if (PolyreplLook.jdk(c) || PolyreplLook.box(c) || PolyreplLook.lambda(c)) {
            throw new PolyreplLook.PathError(path + " is a " + PolyreplLook.typeName(c) + ": it has no members a look reads (arrays, java.util "
                + "collections and maps, records and the fields of the session's classes)");
        }
        List<Field> fs = PolyreplLook.fields(c);
        if (fs.isEmpty()) throw new PolyreplLook.PathError(path + " is of type " + PolyreplLook.typeName(c) + ", with no fields: it has no members");
        for (int i = 0; i < fs.size() && i < look.limit; i++) {
            Object v;
            try {
                v = fs.get(i).get(o);
            } catch (IllegalAccessException e) {
                throw new PolyreplLook.PathError("cannot read " + path + "." + fs.get(i).getName() + ": " + e.getMessage());
            }
            lines.add(look.line(fs.get(i).getName(), v, fs.get(i).getType()));
        }
        return fs.size();
    }
}

// PolyreplJson reads a "vars" command's arguments: a JSON object of
// strings, numbers, booleans and nulls.
class PolyreplJson {
    final String s;
    int i;

    PolyreplJson(String s) {
        this.s = s;
    }

    Map<String, Object> object() {
        Map<String, Object> out = new HashMap<>();
        ws();
        expect('{');
        ws();
        if (peek() == '}') {
            i++;
            return out;
        }
        while (true) {
            ws();
            String k = str();
            ws();
            expect(':');
            ws();
            out.put(k, value());
            ws();
            char c = next();
            if (c == '}') return out;
            if (c != ',') throw new IllegalArgumentException("bad JSON at " + (i - 1));
        }
    }

    Object value() {
        char c = peek();
        if (c == '"') return str();
        if (s.startsWith("true", i)) {
            i += 4;
            return Boolean.TRUE;
        }
        if (s.startsWith("false", i)) {
            i += 5;
            return Boolean.FALSE;
        }
        if (s.startsWith("null", i)) {
            i += 4;
            return null;
        }
        int st = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
        try {
            return Double.parseDouble(s.substring(st, i));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad JSON value at " + st);
        }
    }

    String str() {
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') return b.toString();
            if (c != '\\') {
                b.append(c);
                continue;
            }
            char e = next();
            switch (e) {
                case 'n' -> b.append('\n');
                case 't' -> b.append('\t');
                case 'r' -> b.append('\r');
                case 'b' -> b.append('\b');
                case 'f' -> b.append('\f');
                case 'u' -> {
                    if (i + 4 > s.length()) throw new IllegalArgumentException("bad JSON escape");
                    b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> b.append(e);
            }
        }
    }

    void ws() {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
    }

    char peek() {
        if (i >= s.length()) throw new IllegalArgumentException("JSON ends early");
        return s.charAt(i);
    }

    char next() {
        char c = peek();
        i++;
        return c;
    }

    void expect(char c) {
        if (next() != c) throw new IllegalArgumentException("bad JSON at " + (i - 1) + ": want " + c);
    }
}
