function polyrepl_look(path, all, limit)
  % polyrepl's look at the base workspace (see vars.go): for path {} the
  % session's variables, else the members of what path names ({root,
  % ".field", "{k}", "(k)"}). It prints "total\tN", then one line per
  % variable or member: name, class, size, bytes, members (0/1),
  % preview, tab-separated; or "polyrepl_error\tMESSAGE". It calls no
  % function a user's class can replace, and sets no ans: whos runs in an
  % assignment, values are read by their names alone.
  evalin("base", "polyrepl_look_w__ = whos();");
  w = evalin("base", "polyrepl_look_w__");
  evalin("base", "clear polyrepl_look_w__");
  names = {w.name};
  keep = !strncmp(names, "polyrepl_", 9);
  if !all
    keep = keep & !strcmp(names, "ans");
  end
  w = w(keep);
  if isempty(path)
    % The lines go out in one write: Octave's printf to a pipe costs
    % about 0.1 ms a call.
    n = numel(w);
    k = min(n, limit);
    out = cell(1, k + 2);
    out{1} = sprintf("total\t%d\n", n);
    for i = 1:k
      pv = "";
      if builtin_class(w(i).class)
        pv = preview(evalin("base", w(i).name), w(i).class);
      end
      out{i + 1} = sprintf("%s\t%s\t%s\t%d\t%d\t%s\n", w(i).name, w(i).class, dims(w(i).size), w(i).bytes, has_members(w(i).class), pv);
    end
    out{k + 2} = "";
    if n > k
      % The rest only for their names: no preview.
      rest = w(k+1:end);
      C = [{rest.name}; {rest.class}; {rest.bytes}];
      out{k + 2} = sprintf("%s\t%s\t\t%d\t0\t\n", C{:});
    end
    fputs(stdout, [out{:}]);
    return;
  end
  root = path{1};
  if !any(strcmp({w.name}, root))
    printf("polyrepl_error\t'%s' undefined\n", root);
    return;
  end
  cls = class_of(w, root);
  if !builtin_class(cls)
    printf("polyrepl_error\t%s is a %s object: a look goes into structs and cells only\n", root, cls);
    return;
  end
  v = evalin("base", root);
  at = root;
  for k = 2:numel(path)
    s = path{k};
    c = class(v);
    switch s(1)
      case "."
        f = s(2:end);
        if !strcmp(c, "struct") || numel(v) != 1
          printf("polyrepl_error\t%s is a %s %s, not a scalar struct: it has no field '%s'\n", at, dims(size(v)), c, f);
          return;
        elseif !isfield(v, f)
          printf("polyrepl_error\tinvalid use of undefined value: %s has no field '%s'\n", at, f);
          return;
        end
        v = v.(f);
      case {"{", "("}
        i = str2double(s(2:end-1));
        if s(1) == "{" && !strcmp(c, "cell")
          printf("polyrepl_error\t'{' undefined for arguments of type '%s': %s is not a cell\n", c, at);
          return;
        elseif s(1) == "(" && !strcmp(c, "struct")
          printf("polyrepl_error\t%s is a %s: a look indexes struct arrays with (k), cells with {k}\n", at, c);
          return;
        elseif i > numel(v)
          printf("polyrepl_error\tindex (%d): out of bound %d (dimensions are %s)\n", i, numel(v), dims(size(v)));
          return;
        end
        if s(1) == "{"
          v = v{i};
        else
          v = v(i);
        end
    end
    at = [at s];
    if !builtin_class(class(v))
      printf("polyrepl_error\t%s is a %s object: a look goes into structs and cells only\n", at, class(v));
      return;
    end
  end
  c = class(v);
  if strcmp(c, "struct") && numel(v) == 1
    f = fieldnames(v);
    printf("total\t%d\n", numel(f));
    for i = 1:min(numel(f), limit)
      line(f{i}, v.(f{i}));
    end
  elseif strcmp(c, "struct")
    printf("total\t%d\n", numel(v));
    for i = 1:min(numel(v), limit)
      line(sprintf("(%d)", i), v(i));
    end
  elseif strcmp(c, "cell")
    printf("total\t%d\n", numel(v));
    for i = 1:min(numel(v), limit)
      line(sprintf("{%d}", i), v{i});
    end
  else
    printf("polyrepl_error\t%s is a %s %s: it has no fields or items\n", at, dims(size(v)), c);
  end
end

function line(name, x)
  c = class(x);
  pv = "";
  b = 0;
  if builtin_class(c)
    pv = preview(x, c);
    s = whos("x");
    b = s.bytes;
    d = size(x);
  else
    s = whos("x");
    b = s.bytes;
    d = s.size;
  end
  printf("%s\t%s\t%s\t%d\t%d\t%s\n", name, c, dims(d), b, has_members(c), pv);
end

function c = class_of(w, name)
  c = w(strcmp({w.name}, name)).class;
end

function s = dims(d)
  s = sprintf("%dx", d);
  s = s(1:end-1);
end

function b = builtin_class(c)
  b = any(strcmp(c, {"double", "single", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "logical", "char", "struct", "cell", "function_handle", "bool"}));
end

function m = has_members(c)
  m = any(strcmp(c, {"struct", "cell"}));
end

function s = preview(v, c)
  s = "";
  switch c
    case {"double", "single", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "logical", "bool"}
      n = min(numel(v), 8);
      x = full(v(1:n));
      if n == 0
        s = "[]";
      elseif islogical(x)
        t = {"false", "true"};
        s = strjoin(t(double(x(:).') + 1), " ");
      elseif iscomplex(x)
        s = strtrim(sprintf("%g%+gi ", [real(double(x(:).')); imag(double(x(:).'))]));
      else
        s = strtrim(sprintf("%g ", double(x)));
      end
      if numel(v) > n
        s = [s " …"];
      end
    case "char"
      if rows(v) > 0
        s = ["\"" v(1, 1:min(columns(v), 80)) "\""];
        if rows(v) > 1
          s = [s " …"];
        end
      else
        s = "\"\"";
      end
    case "struct"
      f = fieldnames(v);
      s = strjoin(f(1:min(end, 8))', ", ");
      if numel(f) > 8
        s = [s ", …"];
      end
    case "cell"
      n = min(numel(v), 6);
      t = cellfun(@class, v(1:n), "UniformOutput", false);
      s = ["{" strjoin(t(:)', ", ")];
      if numel(v) > n
        s = [s ", …"];
      end
      s = [s "}"];
    case "function_handle"
      s = func2str(v);
  end
  s = regexprep(s, "[\t\r\n]", " ");
end
