# polyrepl's R worker, its looks: what the session holds, one line a name
# (or a member of what a path names), made from the objects' structure.
# Sourced before worker.R, into the same private environment.
#
# A look calls none of the user's code except, in a look asked for
# between cells (live), a print of an object of a class it does not know,
# under setTimeLimit with its output and conditions caught: its error or
# its time says so in note. The look a cell's "done" carries never does.
# Nothing is assigned in .GlobalEnv; an active binding is listed, never
# read. (A promise made by delayedAssign is forced: base R cannot tell
# one without forcing it.)

# json_unescape decodes a JSON string's body.
json_unescape <- function(s) {
  if (!grepl("\\", s, fixed = TRUE)) return(s)
  ch <- strsplit(s, "", fixed = TRUE)[[1L]]
  out <- character(0L)
  i <- 1L
  n <- length(ch)
  hex <- function(at) if (at + 3L <= n) strtoi(paste(ch[at:(at + 3L)], collapse = ""), 16L) else NA
  while (i <= n) {
    c <- ch[i]
    if (c != "\\" || i == n) {
      out <- c(out, c)
      i <- i + 1L
      next
    }
    e <- ch[i + 1L]
    if (e == "u") {
      code <- hex(i + 2L)
      i <- i + 6L
      if (!is.na(code) && code >= 0xD800 && code < 0xDC00 && i + 1L <= n && ch[i] == "\\" && ch[i + 1L] == "u") {
        lo <- hex(i + 2L)
        if (!is.na(lo) && lo >= 0xDC00 && lo < 0xE000) {
          code <- 0x10000 + (code - 0xD800) * 1024 + (lo - 0xDC00)
          i <- i + 6L
        }
      }
      if (!is.na(code) && code > 0) out <- c(out, intToUtf8(code))
      next
    }
    out <- c(out, switch(e, n = "\n", t = "\t", r = "\r", b = "\b", f = "\f", e))
    i <- i + 2L
  }
  paste(out, collapse = "")
}

# vars_args reads a look's arguments: the flat JSON object the driver
# writes ({"all","limit","path","preview","timeout"}).
vars_args <- function(raw) {
  text <- tryCatch(rawToChar(raw), error = function(e) "")
  Encoding(text) <- "UTF-8"
  field <- function(key, pat) {
    m <- regmatches(text, regexec(paste0('"', key, '"\\s*:\\s*', pat), text, perl = TRUE))[[1L]]
    if (length(m) < 2L) NULL else m[2L]
  }
  num <- function(key, default) {
    v <- suppressWarnings(as.numeric(field(key, "(-?[0-9.eE+-]+)")))
    if (length(v) == 0L || is.na(v)) default else v
  }
  path <- field("path", '"((?:[^"\\\\]|\\\\.)*)"')
  list(path = if (is.null(path)) "" else json_unescape(path),
       all = identical(field("all", "(true|false)"), "true"),
       limit = max(1L, min(10000L, as.integer(num("limit", 100)))),
       width = max(10L, min(1000L, as.integer(num("preview", 80)))),
       timeout = max(0.01, min(5, num("timeout", 0.2))), live = TRUE)
}

# ---- paths ---------------------------------------------------------------------

# vars_parse reads a path: a name (or `name`), then $name, @slot,
# [[number]] or [["name"]] — a small grammar, never evaluated.
vars_parse <- function(path) {
  bad <- function() stop(sprintf("cannot read the path %s: a name, then $name, @slot, [[n]] or [[\"name\"]]",
                                 encodeString(path, quote = "'")), call. = FALSE)
  take <- function(s, pat) regmatches(s, regexec(pat, s, perl = TRUE))[[1L]]
  unq <- function(m, groups) {
    for (g in groups) if (nzchar(m[g])) return(json_unescape(m[g]))
    ""
  }
  name <- '^(?:`((?:[^`\\\\]|\\\\.)+)`|([A-Za-z.][A-Za-z0-9._]*))'
  m <- take(path, name)
  if (length(m) == 0L) bad()
  steps <- list(list(op = "name", key = unq(m, 2:3)))
  s <- substring(path, nchar(m[1L]) + 1L)
  while (nzchar(s)) {
    op <- substr(s, 1L, 1L)
    if (op == "$" || op == "@") {
      m <- take(substring(s, 2L), '^(?:`((?:[^`\\\\]|\\\\.)+)`|"((?:[^"\\\\]|\\\\.)*)"|([A-Za-z.][A-Za-z0-9._]*))')
      if (length(m) == 0L) bad()
      steps[[length(steps) + 1L]] <- list(op = op, key = unq(m, 2:4))
      s <- substring(s, nchar(m[1L]) + 2L)
    } else if (startsWith(s, "[[")) {
      m <- take(s, '^\\[\\[\\s*(?:([0-9]+)L?|"((?:[^"\\\\]|\\\\.)*)"|\'((?:[^\'\\\\]|\\\\.)*)\')\\s*\\]\\]')
      if (length(m) == 0L) bad()
      step <- if (nzchar(m[2L])) list(op = "[[", key = as.numeric(m[2L])) else list(op = "$", key = unq(m, 3:4))
      steps[[length(steps) + 1L]] <- step
      s <- substring(s, nchar(m[1L]) + 1L)
    } else {
      bad()
    }
  }
  steps
}

# binding reads name in env without running it: an active binding is
# refused.
binding <- function(name, env, what) {
  if (!exists(name, envir = env, inherits = FALSE)) stop(sprintf("object '%s' not found", name), call. = FALSE)
  if (bindingIsActive(name, env)) {
    stop(sprintf("%s is an active binding: reading it would run its function", what), call. = FALSE)
  }
  get(name, envir = env, inherits = FALSE)
}

# vars_follow is the object a path names, read with .subset2, slot and
# get: no method of the object's class runs.
vars_follow <- function(path, all) {
  steps <- vars_parse(path)
  name <- steps[[1L]]$key
  env <- globalenv()
  if (!exists(name, envir = env, inherits = FALSE)) {
    env <- NULL
    if (all) for (i in seq_along(search())[-1L]) {
      e <- as.environment(i)
      if (exists(name, envir = e, inherits = FALSE)) {
        env <- e
        break
      }
    }
    if (is.null(env)) stop(sprintf("object '%s' not found", name), call. = FALSE)
  }
  x <- binding(name, env, name)
  where <- name
  for (step in steps[-1L]) {
    key <- step$key
    if (step$op == "@") {
      if (isS4(x)) {
        if (!(key %in% methods::slotNames(x))) {
          stop(sprintf("no slot of name \"%s\" for this object of class \"%s\"", key, class(x)[1L]), call. = FALSE)
        }
        x <- methods::slot(x, key)
      } else {
        a <- attr(x, key, exact = TRUE)
        if (is.null(a)) stop(sprintf("%s has no slot or attribute '%s'", where, key), call. = FALSE)
        x <- a
      }
      where <- paste0(where, "@", key)
      next
    }
    if (is.environment(x)) {
      if (step$op == "[[") stop(sprintf("%s is an environment: name its members, as %s$name", where, where), call. = FALSE)
      x <- binding(key, x, paste0(where, "$", key))
      where <- paste0(where, "$", key)
      next
    }
    if (!(is.list(x) || is.atomic(x)) || isS4(x)) {
      stop(sprintf("%s is of class %s: a look goes into lists, frames, vectors, environments and slots only",
                   where, class(x)[1L]), call. = FALSE)
    }
    if (step$op == "[[") {
      n <- length(attr(x, "names")) %|0|% length_of(x)
      if (is.na(n) || key < 1 || key > n) stop(sprintf("subscript out of bounds: %s has %s items", where, n), call. = FALSE)
      x <- .subset2(x, key)
      where <- sprintf("%s[[%d]]", where, as.integer(key))
    } else {
      if (is.atomic(x) && is.null(attr(x, "names"))) stop("$ operator is invalid for atomic vectors", call. = FALSE)
      nm <- attr(x, "names")
      if (!(key %in% nm)) stop(sprintf("%s has no element '%s'", where, key), call. = FALSE)
      x <- .subset2(x, key)
      where <- paste0(where, "$", key)
    }
  }
  x
}

`%|0|%` <- function(a, b) if (a > 0L) a else b

# ---- one line -------------------------------------------------------------------

# base_packages are where a method may be called from a look: R's own.
base_packages <- c("base", "stats", "utils", "methods", "graphics", "grDevices", "datasets", "tools")

# own_method says whether x's class has a method for generic outside R's
# own packages: calling it would run the user's (or a package's) code.
own_method <- function(generic, x) {
  for (k in class(x)) {
    m <- utils::getS3method(generic, k, optional = TRUE)
    if (is.null(m)) next
    ns <- environment(m)
    if (!(is.environment(ns) && isNamespace(ns) && getNamespaceName(ns) %in% base_packages)) return(TRUE)
  }
  FALSE
}

# length_of is x's length without a method outside R's own (NA if one).
length_of <- function(x) {
  if (is.object(x) && own_method("length", x)) return(NA_integer_)
  length(x)
}

# abbrev is the short word str() uses for a column or item.
abbrev <- function(x) {
  if (is.factor(x)) return("fct")
  if (inherits(x, "Date")) return("Date")
  if (inherits(x, "POSIXct")) return("dttm")
  if (is.data.frame(x)) return("df")
  switch(typeof(x), double = "num", integer = "int", character = "chr", logical = "lgl",
         complex = "cplx", list = "list", closure = , builtin = , special = "fn", raw = "raw",
         NULL = "NULL", environment = "env", S4 = "S4", typeof(x))
}

chars <- function(n) if (is.na(n)) "" else if (n == 1) "1 character" else sprintf("%.0f characters", n)

items <- function(n) if (is.na(n)) "" else if (n == 1) "1 item" else sprintf("%.0f items", n)

# join_cut joins parts with sep until width is reached, saying the rest
# with "…".
join_cut <- function(parts, width, sep = ", ", more = FALSE) {
  n <- length(parts)
  if (n == 0L) return(if (more) "…" else "")
  w <- cumsum(nchar(parts, allowNA = TRUE) + nchar(sep)) - nchar(sep)
  if (!more && !anyNA(w) && w[n] <= width) return(paste(parts, collapse = sep))
  k <- sum(!is.na(w) & w <= width - 2L & cumsum(is.na(w)) == 0L)
  paste0(paste(parts[seq_len(k)], collapse = sep), if (k > 0L) sep, "…")
}

# values is the first values of a vector of a known type, as format()
# writes them.
values <- function(x, width) {
  n <- length(x)
  k <- min(n, 10L)
  if (k == 0L) return("")
  idx <- seq_len(k)
  v <- if (is.factor(x)) as.character(attr(x, "levels"))[.subset(x, idx)] else if (is.object(x)) x[idx] else .subset(x, idx)
  s <- if (is.character(v)) encodeString(v, quote = "\"", na.encode = TRUE) else format(v, trim = TRUE, digits = 7L)
  s[is.na(v)] <- "NA"
  nm <- attr(x, "names")
  if (!is.null(nm)) s <- paste0(nm[idx], "=", s)
  join_cut(s, width, sep = " ", more = n > k)
}

# signature is a function's arguments, as function(x, y = 2).
signature <- function(f) {
  a <- if (is.primitive(f)) formals(args(f)) else formals(f)
  if (is.null(a)) return(if (is.primitive(f)) "primitive function" else "function()")
  k <- names(a)
  parts <- vapply(seq_along(a), function(i) {
    if (identical(a[[i]], quote(expr = ))) k[i] else paste0(k[i], " = ", paste(deparse(a[[i]], nlines = 1L), collapse = ""))
  }, "")
  paste0("function(", paste(parts, collapse = ", "), ")")
}

# known says whether a look may make x's preview from its structure and
# the methods of R's own packages for its class.
known_classes <- c("data.frame", "factor", "Date", "POSIXct", "difftime", "table", "formula",
                   "lm", "glm", "htest", "noquote", "AsIs", "matrix", "array", "integer", "numeric",
                   "character", "logical", "list", "function", "environment", "NULL", "name", "call")
known <- function(x) !isS4(x) && (!is.object(x) || any(class(x) %in% known_classes))

# timed_print is what print (show, for S4) writes for x, on one line, in
# at most timeout seconds, with its output, messages and warnings caught:
# list(text, note). setTimeLimit stops R code, but not Sys.sleep nor
# most C code: a SIGINT that a child shell sends after timeout stops
# those (the worker drains it if it lands after the print).
timed_print <- function(x, o) {
  if (!isTRUE(st$look_left > 0)) {
    return(list(text = "", note = sprintf("the look's time for previews (%g s) ran out: no print", look_budget)))
  }
  limit <- min(o$timeout, st$look_left)
  started <- proc.time()[["elapsed"]]
  out <- character(0L)
  con <- textConnection("out", "w", local = TRUE)
  depth <- sink.number()
  sink(con)
  sink(con, type = "message")
  timer <- NULL
  on.exit({
    setTimeLimit(elapsed = Inf)
    if (length(timer) == 1L && !is.na(timer)) try(tools::pskill(timer, tools::SIGTERM), silent = TRUE)
    sink(type = "message")
    while (sink.number() > depth) sink()
    close(con)
    tryCatch(allowInterrupts(Sys.sleep(0)), interrupt = function(e) NULL)
    st$look_left <- st$look_left - (proc.time()[["elapsed"]] - started)
  })
  # Called from an environment that sees the user's methods, as the
  # REPL's print does; the worker's own environment would not.
  env <- new.env(parent = globalenv())
  assign("x", x, envir = env)
  call <- if (isS4(x)) quote(methods::show(x)) else quote(base::print(x))
  took <- if (limit < o$timeout) sprintf("the look's time for previews (%g s) ran out during print", look_budget) else
    sprintf("print took over %g s", o$timeout)
  timer <- suppressWarnings(as.integer(tryCatch(system(
    # (the shell's TERM trap ends its sleep too: nothing is left behind)
    sprintf("(trap 'kill $s; exit' TERM; sleep %.3f & s=$!; wait $s; kill -INT %d) </dev/null >/dev/null 2>&1 & echo $!",
            limit, Sys.getpid()),
    intern = TRUE), error = function(e) NA)))
  r <- tryCatch({
    setTimeLimit(elapsed = limit, transient = TRUE)
    allowInterrupts(suppressWarnings(suppressMessages(eval(call, env))))
    setTimeLimit(elapsed = Inf)
    NULL
  }, error = function(e) {
    setTimeLimit(elapsed = Inf)
    msg <- tryCatch(conditionMessage(e), error = function(e2) "")
    if (grepl("time limit", msg, fixed = TRUE)) took else paste0("print raised: ", msg)
  }, interrupt = function(e) {
    if (proc.time()[["elapsed"]] - started >= limit * 0.9) took else "print was interrupted"
  })
  if (!is.null(r)) return(list(text = "", note = r))
  text <- gsub("\\s+", " ", trimws(paste(out[nzchar(trimws(out))], collapse = " ")))
  list(text = text, note = "")
}

# vars_memory is object.size of x when that is cheap (it walks the
# object): vectors, and lists of at most 1,000 such, up to 100,000
# strings in all; else 0.
vars_memory <- function(x) {
  budget <- 1e5
  cheap <- function(y, depth) {
    if (is.character(y)) {
      budget <<- budget - length(y)
      return(budget >= 0)
    }
    if (is.atomic(y) || is.null(y) || is.function(y) || is.symbol(y)) return(TRUE)
    if (is.list(y) && !isS4(y) && depth < 3L && length(y) <= 1000L) {
      for (e in y) if (!cheap(e, depth + 1L)) return(FALSE)
      return(TRUE)
    }
    FALSE
  }
  if (!cheap(x, 0L)) return(0)
  as.numeric(utils::object.size(x))
}

# vars_line is the line for x under name: its class, size, memory and
# preview, from its structure.
vars_line <- function(name, x, o) {
  cls <- class(x)
  v <- list(name = name, type = cls[1L], size = "", memory = 0, preview = "", note = "", members = FALSE)
  if (is.data.frame(x)) {
    nm <- attr(x, "names")
    v$size <- sprintf("%d×%d", .row_names_info(x, 2L), length(nm))
    cols <- vapply(seq_along(nm), function(i) paste(nm[i], abbrev(.subset2(x, i))), "")
    v$preview <- join_cut(cols, o$width)
    v$members <- TRUE
  } else if (is.function(x)) {
    v$preview <- signature(x)
  } else if (is.environment(x)) {
    nm <- names(x)
    v$size <- items(length(nm))
    en <- environmentName(x)
    # (sorted only when small: a preview of a big one is not worth a sort)
    v$preview <- join_cut(if (length(nm) <= 1000L) sort(nm) else nm[seq_len(20L)], o$width, more = length(nm) > 1000L)
    if (nzchar(en)) v$preview <- paste0("<", en, "> ", v$preview)
    v$members <- TRUE
  } else if (isS4(x)) {
    s <- methods::slotNames(x)
    v$preview <- join_cut(paste0("@", s), o$width)
    v$members <- length(s) > 0L
  } else if (is.atomic(x) || is.null(x)) {
    d <- attr(x, "dim")
    n <- length_of(x)
    v$size <- if (!is.null(d)) paste(d, collapse = "×") else
      if (is.character(x) && identical(n, 1L) && !is.object(x)) chars(nchar(x, "chars", allowNA = TRUE)) else items(n)
    if (is.factor(x)) {
      lv <- attr(x, "levels")
      v$preview <- join_cut(lv, o$width - 12L, more = FALSE)
      v$preview <- paste0(length(lv), if (length(lv) == 1L) " level: " else " levels: ", v$preview)
    } else if (known(x)) {
      v$preview <- values(x, o$width)
      if (!is.null(d)) v$preview <- paste(typeof(x), v$preview)
    }
    v$members <- is.null(d) && !is.na(n) && n > 1L && !is.object(x)
  } else if (is.list(x)) {
    n <- length(attr(x, "names")) %|0|% length_of(x)
    v$size <- items(n)
    call <- if (!is.null(attr(x, "names")) && "call" %in% attr(x, "names")) .subset2(x, "call")
    if (is.call(call)) {
      v$preview <- paste(deparse(call, width.cutoff = 500L, nlines = 1L), collapse = "")
    } else if (!is.na(n) && n > 0L) {
      k <- min(n, 20L)
      nm <- attr(x, "names")
      labels <- if (is.null(nm)) rep("", k) else nm[seq_len(k)]
      parts <- vapply(seq_len(k), function(i) {
        a <- abbrev(.subset2(x, i))
        if (nzchar(labels[i]) && !is.na(labels[i])) paste0(labels[i], ": ", a) else a
      }, "")
      v$preview <- join_cut(parts, o$width, more = n > k)
    }
    v$members <- !is.na(n) && n > 0L
  } else if (is.language(x)) {
    v$preview <- paste(deparse(x, width.cutoff = 500L, nlines = 1L), collapse = "")
  } else {
    v$type <- if (is.object(x)) cls[1L] else typeof(x)
  }
  if (!known(x) && isTRUE(o$live)) {
    p <- timed_print(x, o)
    if (nzchar(p$text)) v$preview <- p$text
    v$note <- p$note
  }
  v$memory <- vars_memory(x)
  v$preview <- fit(v$preview, o$width)
  v
}

# fit cuts s to width characters, saying the cut with "…".
fit <- function(s, width) {
  n <- nchar(s, allowNA = TRUE)
  if (is.na(n)) return("")
  if (n > width) paste0(substr(s, 1L, width - 1L), "…") else s
}

# safe_line is vars_line, and a line that says why where it failed.
safe_line <- function(name, x, o) {
  tryCatch(vars_line(name, x, o), error = function(e) {
    list(name = name, type = tryCatch(class(x)[1L], error = function(e2) "?"),
         note = paste0("cannot look: ", conditionMessage(e)))
  })
}

# ---- a look -----------------------------------------------------------------------

# vars_names are the names a look lists: .GlobalEnv's, dot-names only with
# all, and with all the attached packages' too (a masked one once);
# sorted by code point, each with its environment.
vars_names <- function(all) {
  g <- names(globalenv())
  if (!all) g <- g[!startsWith(g, ".")]
  envs <- rep(1L, length(g))
  if (all) {
    for (i in seq_along(search())[-1L]) {
      nm <- names(as.environment(i))
      g <- c(g, nm)
      envs <- c(envs, rep(i, length(nm)))
    }
    keep <- !duplicated(g)
    g <- g[keep]
    envs <- envs[keep]
  }
  o <- order(g, method = "radix")
  list(names = g[o], envs = envs[o])
}

# vars_list is the lines for names (from vars_names), at most limit.
vars_list <- function(found, o) {
  k <- min(length(found$names), o$limit)
  one <- function(i, line) {
    name <- found$names[i]
    env <- as.environment(found$envs[i])
    if (bindingIsActive(name, env)) {
      list(name = name, type = "active binding", note = "an active binding: a look does not run it")
    } else {
      line(name, get(name, envir = env, inherits = FALSE), o)
    }
  }
  # One handler for all the lines (a handler a line costs half the
  # look); a line that fails makes them again, each with its own.
  tryCatch(lapply(seq_len(k), one, vars_line),
           error = function(e) lapply(seq_len(k), one, safe_line))
}

# vars_members is the lines for what x holds: a frame's columns, a list's
# items, an environment's names, an object's slots, a vector's items.
vars_members <- function(x, path, o) {
  if (is.environment(x)) {
    nm <- sort(names(x))
    if (!o$all) nm <- nm[!startsWith(nm, ".")]
    k <- min(length(nm), o$limit)
    lines <- lapply(nm[seq_len(k)], function(n) {
      if (bindingIsActive(n, x)) list(name = n, type = "active binding", note = "an active binding: a look does not run it")
      else safe_line(n, get(n, envir = x, inherits = FALSE), o)
    })
    return(list(lines = lines, total = length(nm)))
  }
  if (isS4(x)) {
    s <- methods::slotNames(x)
    k <- min(length(s), o$limit)
    lines <- lapply(s[seq_len(k)], function(n) safe_line(paste0("@", n), methods::slot(x, n), o))
    return(list(lines = lines, total = length(s)))
  }
  if (is.list(x) || (is.atomic(x) && is.null(attr(x, "dim")))) {
    nm <- attr(x, "names")
    n <- length(nm) %|0|% length_of(x)
    if (is.na(n)) stop(sprintf("%s has a length method of its own: a look does not run it", path), call. = FALSE)
    if (is.atomic(x) && n <= 1L && is.null(nm)) stop(sprintf("%s is a single %s: it has no members", path, class(x)[1L]), call. = FALSE)
    k <- min(n, o$limit)
    lines <- vector("list", k)
    for (i in seq_len(k)) {
      label <- if (!is.null(nm) && !is.na(nm[i]) && nzchar(nm[i])) nm[i] else sprintf("[[%d]]", i)
      item <- if (is.atomic(x) && is.object(x) && known(x)) x[i] else .subset2(x, i)
      lines[[i]] <- safe_line(label, item, o)
    }
    return(list(lines = lines, total = n))
  }
  stop(sprintf("%s is of class %s: a look lists the members of lists, frames, vectors, environments and S4 objects",
               path, class(x)[1L]), call. = FALSE)
}

# look_budget is the seconds all the prints of one look may take together:
# the holder waits 10 s for a look, and a look of many slow objects must
# answer well within.
look_budget <- 1

# look answers a "vars" command: list(vars, total) or list(error).
look <- function(a) {
  st$look_left <- look_budget
  tryCatch({
    if (!nzchar(a$path)) {
      found <- vars_names(a$all)
      list(vars = vars_list(found, a), total = length(found$names))
    } else {
      m <- vars_members(vars_follow(a$path, a$all), a$path, a)
      list(vars = m$lines, total = m$total)
    }
  }, error = function(e) list(error = conditionMessage(e)),
  interrupt = function(e) list(error = "the look was interrupted"))
}

# cell_look is the look a cell's "done" carries: the session's own names,
# from structure only, and the names from the same source.
cell_look <- function(res) {
  tryCatch({
    found <- vars_names(FALSE)
    o <- list(limit = 100L, width = 80L, all = FALSE, live = FALSE, timeout = 0)
    res$vars <- vars_list(found, o)
    res$vars_total <- length(found$names)
    res$names <- as.list(found$names[seq_len(min(length(found$names), 500L))])
    res
  }, error = function(e) {
    res$names <- user_names()
    res
  }, interrupt = function(e) {
    res$names <- user_names()
    res
  })
}
