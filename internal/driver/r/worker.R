# polyrepl's R worker: one session's global environment.
#
# The daemon starts it as
#   R --no-echo --no-restore --no-save --no-readline --interactive --args WORKER
# and writes LOADER (r.go) as the first line of R's console, its standard
# input: it sources this file into a private environment whose parent is
# the base environment: nothing of the worker is in .GlobalEnv (the user's
# namespace), and what the user defines there cannot shadow what the
# worker calls. The rest of the console is for the cells: readline(),
# menu(), browser() read their answers there, and the daemon knows they
# ask because R blocks reading it. It talks to the daemon over three
# channels:
#   fd 3  commands in: a header line "exec CELL VALUE_LIMIT NBYTES" and then
#         NBYTES of UTF-8 code
#   fd 4  events out, one JSON object per line ({"op": "hello"|"done", ...})
#   fd 1  and fd 2 are one pipe that carries every byte the cell prints,
#         R's own and its subprocesses'. After a cell ends, the worker writes
#         SENTINEL to fd 1 so the daemon knows that all of that cell's output
#         has arrived before it reports the cell done.
#
# A cell runs like lines typed at the R prompt: each top-level expression is
# evaluated in .GlobalEnv, a visible value is printed as the REPL prints it
# (the last one becomes the cell's value instead), deferred warnings are
# printed after each expression, and .Last.value is kept.
#
# Interrupts: R turns SIGINT into an "interrupt" condition at its next check.
# The worker keeps interrupts suspended except while a cell runs, so a
# SIGINT between cells only leaves a pending interrupt, which is drained
# just before the next cell starts.
#
# Between cells, "fork NBYTES NONCE" copies the worker (fork.R).
#
# Start stays fast: nothing is attached beyond R's default packages, only
# parallel's namespace is loaded (for closing two descriptors), and there is
# no jsonlite: the few JSON shapes sent are written by hand.

st <- new.env(parent = emptyenv())

# ---- JSON -------------------------------------------------------------------

json_str <- function(s) {
  if (length(s) == 0L || is.na(s[1L])) return("null")
  s <- enc2utf8(as.character(s[1L]))
  if (grepl("[\001-\037\177\"\\\\]", s, useBytes = TRUE)) {
    s <- gsub("\\", "\\\\", s, fixed = TRUE, useBytes = TRUE)
    s <- gsub("\"", "\\\"", s, fixed = TRUE, useBytes = TRUE)
    s <- gsub("\n", "\\n", s, fixed = TRUE, useBytes = TRUE)
    s <- gsub("\r", "\\r", s, fixed = TRUE, useBytes = TRUE)
    s <- gsub("\t", "\\t", s, fixed = TRUE, useBytes = TRUE)
    if (grepl("[\001-\037\177]", s, useBytes = TRUE)) {
      for (b in c(1:8, 11:12, 14:31, 127)) {
        s <- gsub(rawToChar(as.raw(b)), sprintf("\\u%04x", b), s,
                  fixed = TRUE, useBytes = TRUE)
      }
    }
  }
  paste0("\"", s, "\"")
}

# json writes the shapes the worker sends: named lists are objects (their
# keys are plain identifiers), other lists arrays, and scalars strings,
# whole numbers or booleans.
json <- function(x) {
  if (is.null(x)) return("null")
  if (is.list(x)) {
    items <- vapply(x, json, "")
    if (is.null(names(x))) return(paste0("[", paste(items, collapse = ","), "]"))
    return(paste0("{", paste0("\"", names(x), "\":", items, collapse = ","), "}"))
  }
  if (is.logical(x)) return(if (isTRUE(x)) "true" else "false")
  if (is.numeric(x)) return(sprintf("%.0f", x[1L]))
  json_str(x)
}

send <- function(obj) {
  writeBin(charToRaw(paste0(json(obj), "\n")), st$events)
  flush(st$events)
}

# ---- reading commands --------------------------------------------------------

# read_command returns list(cell, limit, code), "skip" for a line that is
# not a command, or NULL once the daemon closed the channel. The connection
# is binary, so R keeps no read-ahead buffer of its own: readLines and
# readBin both read the same C stream in turn.
read_command <- function() {
  con <- st$commands
  header <- readLines(con, n = 1L, warn = FALSE)
  if (length(header) == 0L) return(NULL)
  parts <- strsplit(header, " ", fixed = TRUE)[[1L]]
  if (length(parts) == 3L && parts[1L] == "complete") {
    size <- suppressWarnings(as.numeric(parts[2L]))
    if (is.na(size)) return("skip")
    word <- if (size > 0) readBin(con, "raw", size) else raw(0L)
    if (length(word) < size) return(NULL)
    return(list(complete = TRUE, nonce = parts[3L], word = word))
  }
  if (length(parts) == 3L && parts[1L] == "fork") {
    size <- suppressWarnings(as.numeric(parts[2L]))
    if (is.na(size)) return("skip")
    args <- if (size > 0) readBin(con, "raw", size) else raw(0L)
    if (length(args) < size) return(NULL)
    return(list(fork = TRUE, nonce = parts[3L], args = args))
  }
  if (length(parts) == 3L && parts[1L] == "vars") {
    size <- suppressWarnings(as.numeric(parts[2L]))
    if (is.na(size)) return("skip")
    args <- if (size > 0) readBin(con, "raw", size) else raw(0L)
    if (length(args) < size) return(NULL)
    return(list(vars = TRUE, nonce = parts[3L], args = args))
  }
  if (!(length(parts) %in% c(4L, 5L)) || parts[1L] != "exec") return("skip")
  nums <- suppressWarnings(as.numeric(parts[2:4]))
  if (anyNA(nums)) return("skip")
  size <- nums[3L]
  code <- if (size > 0) readBin(con, "raw", size) else raw(0L)
  if (length(code) < size) return(NULL)
  list(cell = nums[1L], limit = nums[2L], code = code,
       nonce = if (length(parts) == 5L) parts[5L] else NULL)
}

# complete is what word (raw UTF-8 bytes) may become, for a console's Tab:
# R's own completion (utils' rcompgen, as R's readline Tab uses) on the
# session's namespace — names, functions, keywords, pkg::name, and after
# $ or @ the object's names (df$co -> df$colour). Only a word of names and
# $ @ :: is completed, so no call is evaluated (the names before $ are,
# as R's Tab does; a .DollarNames method may run). What it prints, says
# or warns is caught; at most 200 matches.
complete <- function(raw) {
  word <- tryCatch(rawToChar(raw), error = function(e) "")
  if (length(raw) > 300L || !grepl("^[A-Za-z0-9._$@:]+$", word)) {
    return(character(0L))
  }
  found <- character(0L)
  out <- textConnection(NULL, "w", local = TRUE)
  sink(out)
  on.exit({ sink(); close(out) }, add = TRUE)
  tryCatch(suppressMessages(suppressWarnings({
    utils:::.assignLinebuffer(word)
    utils:::.assignEnd(nchar(word))
    utils:::.guessTokenFromLine()
    utils:::.completeToken()
    m <- utils:::.retrieveCompletions()
    m <- m[!is.na(m) & startsWith(m, word) & nchar(m, "bytes") <= 300L]
    found <- utils::head(sort(unique(m)), 200L)
  })), error = function(e) NULL, interrupt = function(e) NULL)
  found
}

# ---- running a cell ------------------------------------------------------------

# run_top evaluates one top-level expression. It records its own frame
# number, so handlers can tell the worker's frames (up to and including
# eval's) from the user's.
run_top <- function(cell_expr, cell_env) {
  st$mark <- sys.nframe()
  withVisible(eval(cell_expr, cell_env))
}

# The number of frames eval adds above run_top before the user's code runs.
st$mark <- 0L
st$depth <- run_top(quote(sys.nframe()), globalenv())$value - st$mark

# user_stack is the stack of the user's code as traceback() lists it,
# innermost first and with source references, from a calling handler's
# view: without the handler and the condition machinery above, nor the
# worker's frames below (up to run_top's eval).
user_stack <- function(tb) {
  # Without run_top's eval on the stack, the condition came from the
  # worker itself (an interrupt between two expressions): no user frames.
  end <- 0L
  for (j in seq_along(tb)) {
    if (identical(tb[[j]][1L], "eval(cell_expr, cell_env)")) {
      end <- j - 1L
      break
    }
  }
  tb <- tb[seq_len(end)]
  while (length(tb) && startsWith(tb[[1L]][1L], ".handleSimpleError(")) tb <- tb[-1L]
  # An interrupt while R's bytecode compiler readies a loop before its
  # first run (the JIT) comes from the compiler's frames, not the cell's:
  # they go, down to the loop the cell wrote.
  for (j in rev(seq_along(tb))) {
    if (startsWith(tb[[j]][1L], "compiler:::tryCompile(")) {
      tb <- tb[-seq_len(j)]
      break
    }
  }
  tb
}

# worker_call says whether call is one of the frames of eval in run_top,
# the call that R gives a condition signalled at a cell's top level (the
# REPL gives none there).
worker_call <- function(call) {
  if (is.null(call)) return(FALSE)
  for (i in st$mark + seq_len(st$depth)) {
    if (i <= sys.nframe() && identical(call, sys.call(i))) return(TRUE)
  }
  FALSE
}

on_error <- function(e) {
  tb <- .Internal(traceback(0L)) # forced here: as an argument it would count user_stack
  st$calls <- user_stack(tb[-1L])
  st$top <- worker_call(conditionCall(e))
}

on_interrupt <- function(e) {
  tb <- .Internal(traceback(0L)) # forced here: as an argument it would count user_stack
  st$calls <- user_stack(tb[-1L])
}

on_warning <- function(w) {
  st$warned <- TRUE
  if (worker_call(conditionCall(w))) {
    # Signal it again without the worker's call, so R collects (or shows,
    # with options(warn = 1)) it as it would at the prompt.
    warning(simpleWarning(conditionMessage(w), NULL))
    invokeRestart("muffleWarning")
  }
}

# print_warnings shows the warnings R deferred during one top-level
# expression the way the REPL does, and leaves them for warnings().
print_warnings <- function() {
  if (!isTRUE(st$warned)) return(invisible())
  st$warned <- FALSE
  out <- utils::capture.output(.Internal(printDeferredWarnings()), type = "message")
  if (length(out)) {
    out[1L] <- sub("^In addition: ", "", out[1L])
    cat(out, sep = "\n", file = stderr())
  }
}

# print_value prints a value as the REPL's auto-print does: show() for S4
# objects, else print(), called from an environment that sees the user's
# methods.
print_value <- function(value) {
  env <- new.env(parent = globalenv())
  assign("x", value, envir = env)
  run_top(if (isS4(value)) quote(methods::show(x)) else quote(base::print(x)), env)
  invisible()
}

# capture_value is the text print_value writes, as capture.output would
# give it, with fewer steps: it is on the path of every cell with a value.
capture_value <- function(value) {
  out <- NULL
  con <- textConnection("out", "w", local = TRUE)
  sink(con)
  on.exit({
    sink()
    close(con)
  })
  print_value(value)
  sink()
  close(con)
  on.exit()
  paste(out, collapse = "\n")
}

set_last_value <- function(value) {
  try({
    unlockBinding(".Last.value", baseenv())
    assign(".Last.value", value, envir = baseenv())
    lockBinding(".Last.value", baseenv())
  }, silent = TRUE)
}

eval_cell <- function(exprs) {
  n <- length(exprs)
  for (i in seq_len(n)) {
    r <- run_top(exprs[[i]], globalenv())
    set_last_value(r$value)
    if (r$visible) {
      if (i == n) {
        st$value <- capture_value(r$value)
      } else {
        print_value(r$value)
      }
    }
    print_warnings()
  }
}

# error_text is the error as the REPL shows it, then the stack as
# traceback() would list it, innermost first.
error_text <- function(e, calls, top) {
  msg <- tryCatch(conditionMessage(e), error = function(x) "<the condition has no message>")
  call <- if (top) NULL else conditionCall(e)
  if (is.null(call)) {
    text <- paste0("Error: ", msg)
  } else {
    dcall <- deparse(call, nlines = 1L)[1L]
    prefix <- paste0("Error in ", dcall, " : ")
    line1 <- strsplit(msg, "\n", fixed = TRUE)[[1L]][1L]
    w <- 14L + nchar(dcall, type = "w", allowNA = TRUE) + nchar(line1, type = "w", allowNA = TRUE)
    if (!is.na(w) && w > 75L) prefix <- paste0(prefix, "\n  ")
    text <- paste0(prefix, msg)
  }
  lone_stop <- length(calls) == 1L && startsWith(calls[[1L]][1L], "stop(")
  if (!lone_stop) text <- paste(c(text, stack_text(calls)), collapse = "\n")
  text
}

# stack_text lists calls as traceback() does (innermost first, numbered
# from the outermost, with source locations), keeping the innermost and
# outermost few of a deep stack such as a runaway recursion's.
stack_text <- function(calls, keep = 10L) {
  n <- length(calls)
  idx <- seq_len(n)
  if (n > 2L * keep + 1L) idx <- c(seq_len(keep), NA, (n - keep + 1L):n)
  out <- character()
  for (i in idx) {
    if (is.na(i)) {
      out <- c(out, sprintf("   [... %d calls not shown ...]", n - 2L * keep))
      next
    }
    xi <- calls[[i]]
    if (length(xi) > 5L) xi <- c(xi[1:5], " ...")
    loc <- tryCatch({
      srcref <- attr(calls[[i]], "srcref")
      if (is.null(srcref)) "" else
        paste0(" at ", basename(attr(srcref, "srcfile")$filename), "#", srcref[1L])
    }, error = function(e) "")
    xi[length(xi)] <- paste0(xi[length(xi)], loc)
    label <- paste0(n - i + 1L, ": ")
    out <- c(out, paste0(c(label, rep(strrep(" ", nchar(label)), length(xi) - 1L)), xi))
  }
  out
}

cut_value <- function(res, text, limit) {
  if (!validUTF8(text)) text <- iconv(text, "UTF-8", "UTF-8", sub = "byte")
  total <- nchar(text, type = "chars", allowNA = TRUE)
  if (is.na(total)) total <- nchar(text, type = "bytes")
  res$value_total <- total
  if (total > limit) {
    head <- limit %/% 2
    res$value_head <- substr(text, 1L, head)
    res$value_tail <- substr(text, total - (limit - head) + 1L, total)
  } else {
    res$value <- text
  }
  res
}

user_names <- function(limit = 500L) {
  found <- names(globalenv())
  found <- found[!startsWith(found, ".")]
  found <- found[order(found, method = "radix")]
  as.list(found[seq_len(min(length(found), limit))])
}

run_cell <- function(cell, code, limit) {
  res <- list(op = "done", cell = cell, status = "done")
  filename <- sprintf("<cell %d>", cell)
  exprs <- tryCatch({
    if (any(code == as.raw(0L))) stop("the cell contains a NUL byte, which R code cannot hold")
    text <- rawToChar(code)
    Encoding(text) <- "UTF-8"
    # Source references serve printing functions and locating errors in
    # them; they cost more than the rest of a small cell, so only code that
    # may define a function keeps them.
    if (grepl("function", text, fixed = TRUE) || grepl("\\", text, fixed = TRUE)) {
      parse(text = text, keep.source = TRUE, srcfile = srcfilecopy(filename, text))
    } else {
      parse(text = text, keep.source = FALSE, srcfile = filename)
    }
  }, error = function(e) e)
  if (inherits(exprs, "error")) {
    msg <- conditionMessage(exprs)
    res$status <- "error"
    res$error <- list(type = class(exprs)[1L], message = msg, traceback = paste0("Error: ", msg))
    return(cell_look(res))
  }
  st$value <- NULL
  st$calls <- list()
  st$top <- FALSE
  st$warned <- FALSE
  # A SIGINT that came while no cell ran is pending; drain it here.
  tryCatch(allowInterrupts(Sys.sleep(0)), interrupt = function(e) NULL)
  plots_open(cell)
  outcome <- tryCatch(
    withCallingHandlers(
      {
        allowInterrupts(eval_cell(exprs))
        NULL
      },
      error = on_error, warning = on_warning, interrupt = on_interrupt),
    error = function(e) e,
    interrupt = function(e) e)
  if (inherits(outcome, "interrupt")) {
    res$status <- "interrupted"
    tb <- paste(c("Interrupted", stack_text(st$calls)), collapse = "\n")
    res$error <- list(type = "interrupt", message = "interrupted", traceback = tb)
  } else if (inherits(outcome, "error")) {
    res$status <- "error"
    msg <- tryCatch(conditionMessage(outcome), error = function(x) "")
    res$error <- list(type = class(outcome)[1L], message = msg,
                      traceback = error_text(outcome, st$calls, st$top))
  } else if (!is.null(st$value)) {
    res <- cut_value(res, st$value, limit)
  }
  # Warnings deferred by an expression that did not finish.
  tryCatch(print_warnings(), error = function(e) NULL, interrupt = function(e) NULL)
  st$value <- NULL
  res <- tryCatch(plots_close(res, cell), error = function(e) res, interrupt = function(e) res)
  cell_look(res)
}

# ---- plots -------------------------------------------------------------------

# A cell's plots are drawn on a 640x480 PNG device opened for it, one file
# a page, when no device is open (else they go where the user chose), and
# told as its rich output, as a notebook shows them: base graphics and
# printed ggplot values alike, without the user opening a device.
plots_open <- function(cell) {
  st$plot_dev <- NULL
  if (!nzchar(st$spool) || grDevices::dev.cur() != 1L) return(invisible())
  st$plot_pattern <- sprintf("rplot-%d-%d-", Sys.getpid(), cell)
  file <- file.path(st$spool, paste0(st$plot_pattern, "%03d.png"))
  ok <- tryCatch({
    grDevices::png(file, width = 640L, height = 480L, type = "cairo")
    TRUE
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (ok) st$plot_dev <- grDevices::dev.cur()
}

plots_close <- function(res, cell) {
  dev <- st$plot_dev
  st$plot_dev <- NULL
  if (is.null(dev)) return(res)
  if (dev %in% grDevices::dev.list()) grDevices::dev.off(dev)
  files <- list.files(st$spool, pattern = paste0("^", st$plot_pattern, "[0-9]+[.]png$"), full.names = TRUE)
  files <- files[file.size(files) > 0]
  rich <- list()
  for (f in files[seq_len(min(20L, length(files)))]) {
    rich[[length(rich) + 1L]] <- list(mime = "image/png", file = f, width = 640L, height = 480L,
                                      bytes = file.size(f), text = "<R plot 640x480>")
  }
  if (length(files) > 20L) {
    unlink(files[-(1:20)])
    res$rich_more <- length(files) - 20L
  }
  if (length(rich) > 0L) res$rich <- rich
  res
}

# flush_all pushes out what the cell wrote, then marks the end of its
# output on fd 1 itself (a sink the cell left open diverts stdout()),
# unless mark is FALSE.
flush_all <- function(mark = TRUE) {
  tryCatch({
    flush(stdout())
    flush(stderr())
    if (mark) writeBin(st$sentinel, st$out)
    flush(st$out)
    TRUE
  }, error = function(e) FALSE)
}

# ---- start -------------------------------------------------------------------

setup_locale <- function() {
  if (isTRUE(l10n_info()[["UTF-8"]])) return()
  for (loc in c("C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8", "UTF-8")) {
    ok <- suppressWarnings(Sys.setlocale("LC_CTYPE", loc))
    if (!identical(ok, "") && isTRUE(l10n_info()[["UTF-8"]])) return()
  }
}

main <- function() {
  args <- commandArgs(trailingOnly = TRUE)
  # The end marker comes in the environment (older daemons: the last
  # argument), taken out before any cell runs.
  sentinel <- Sys.getenv("POLYREPL_WORKER_SENTINEL")
  Sys.unsetenv("POLYREPL_WORKER_SENTINEL")
  if (!nzchar(sentinel)) sentinel <- args[length(args)]
  st$sentinel <- charToRaw(sentinel)
  # Where the cell's plots are saved for the daemon; out of the
  # environment, so the cell's subprocesses do not see it.
  st$spool <- Sys.getenv("POLYREPL_WORKER_SPOOL")
  Sys.unsetenv("POLYREPL_WORKER_SPOOL")
  setup_locale()
  # Opened close-on-exec ("e"), and the inherited descriptors closed, so
  # the cell's subprocesses do not hold the control channels.
  st$commands <- file("/dev/fd/3", "reb", raw = TRUE)
  st$events <- file("/dev/fd/4", "web", raw = TRUE)
  st$out <- file("/dev/fd/1", "aeb", raw = TRUE)
  # What the channels are, to a fork's account of what it shares (not
  # them): their pipes, as /proc/self/fd names them (Linux).
  st$channels <- Sys.readlink(sprintf("/proc/self/fd/%d", 0:4))
  try(get("closeFD", envir = asNamespace("parallel"))(c(3L, 4L)), silent = TRUE)
  # As at the prompt: functions keep their source, for printing and srcrefs;
  # and prompts are shown (browser()'s "Browse[1]> " is the question's text).
  options(keep.source = TRUE, echo = TRUE)
  version <- paste(R.version$major, R.version$minor, sep = ".")
  st$pid <- Sys.getpid()
  st$hello <- list(op = "hello", version = version, implementation = "R",
                   executable = file.path(R.home("bin"), "R"), pid = st$pid)
  send(st$hello)
  # How the worker comes back after Q in browser() (see come_back).
  options(polyrepl.resume = resume)
  run_loop()
}

# run_loop serves cells. The abort restart, which R's prompt offers, is set
# up once around the loop rather than per cell: a cell that invokes it
# unwinds to here and is reported as an error, and the loop goes on. R
# also takes it for an error nothing handled: outside a cell that is the
# worker's own failure (say the cell ran closeAllConnections(), closing
# the channels), and the worker ends rather than fail again forever.
run_loop <- function() {
  st$unwound <- TRUE
  on.exit(if (isTRUE(st$unwound)) come_back())
  repeat {
    if (withRestarts(serve(), abort = function() FALSE)) {
      st$unwound <- FALSE
      return(invisible())
    }
    if (is.null(st$cell)) break
    abandoned("the cell invoked the abort restart")
  }
  st$unwound <- FALSE
  cat("polyrepl: the R worker cannot go on (did the cell close its connections,",
      "e.g. with closeAllConnections()?); the session ends\n", file = stderr())
  quit(save = "no", status = 70L, runLast = FALSE)
}

# head_first puts a result's op, cell, nonce and status first.
head_first <- function(res, nonce) {
  rest <- res[setdiff(names(res), c("op", "cell", "nonce", "status"))]
  c(list(op = "done", cell = res$cell, nonce = nonce, status = res$status), rest)
}

# abandoned reports the cell in flight as ended by why.
abandoned <- function(why) {
  res <- list(op = "done", cell = st$cell, status = "error",
              error = list(type = "abort", message = why, traceback = why),
              names = user_names())
  res <- head_first(res, st$nonce)
  st$cell <- NULL
  res$flushed <- flush_all()
  send(res)
}

# come_back runs as R unwinds the worker to its top level, past every
# handler and restart: Q in browser() does that. R's prompt then reads
# the console, so the worker writes there, into its own standard input,
# the line that resumes it.
come_back <- function() {
  options(echo = FALSE) # R's own prompt, "> ", is not the cell's output
  tryCatch({
    con <- file("/dev/fd/0", "wb", raw = TRUE)
    writeBin(charToRaw('getOption("polyrepl.resume")(); quit(save = "no")\n'), con)
    close(con)
  }, error = function(e) NULL)
}

resume <- function() {
  options(echo = TRUE)
  suspendInterrupts({
    if (!is.null(st$cell)) abandoned("Q in the browser ended the cell")
    run_loop()
  })
}

# serve runs cells until the daemon closes the command channel.
serve <- function() {
  repeat {
    cmd <- read_command()
    if (is.null(cmd)) return(TRUE)
    if (identical(cmd, "skip")) next
    if (isTRUE(cmd$complete)) {
      # Between cells, answered at once: no cell, nothing printed.
      send(list(op = "complete", nonce = cmd$nonce,
                matches = as.list(complete(cmd$word))))
      next
    }
    if (isTRUE(cmd$vars)) {
      # A look between cells: no cell, nothing printed, nothing assigned.
      send(c(list(op = "vars", nonce = cmd$nonce), look(vars_args(cmd$args))))
      next
    }
    if (isTRUE(cmd$fork)) {
      # A copy of the worker (fork.R): the copy goes on here, on its own
      # channels; the parent answered and goes on too.
      fork_command(cmd)
      next
    }
    st$cell <- cmd$cell
    st$nonce <- cmd$nonce
    res <- run_cell(cmd$cell, cmd$code, cmd$limit)
    st$cell <- NULL
    if (Sys.getpid() != st$pid) {
      # A child forked by the cell ran off its end: it must not answer
      # for the session or read its commands. It ends at once, without
      # R's clean-up, which would remove the temporary directory it
      # shares with the session (parallel's mcexit would wait for a
      # signal from the session that never comes).
      flush_all(mark = FALSE)
      tools::pskill(Sys.getpid(), tools::SIGKILL)
    }
    # The exec's nonce, so the daemon takes no event a cell forged; with
    # the cell and status first, which the daemon reads from the head of
    # an event too long to take.
    res <- head_first(res, cmd$nonce)
    res$flushed <- flush_all()
    send(res)
  }
}

suspendInterrupts(main())
