# polyrepl's R worker, its fork: a copy of the session, taken between
# cells. Sourced after vars.R, before worker.R, into the same private
# environment.
#
# "fork NBYTES NONCE" and {"dir": DIR, "sentinel": MARKER, "cookie":
# KEY=VALUE} ask for a copy of the worker. Base R has neither fork() that says the child's pid nor
# dup2() nor setpgid(): libc itself is loaded (dyn.load of the libc the
# process already maps, on the first fork) and its fork() and setsid()
# are called through .C, which calls a function without arguments as C
# does; the parent learns the copy's pid from the children the kernel
# lists for it (/proc/self/task/PID/children), before and after. The copy
# is neither parallel's child nor a "forked child" to R: parallel does
# not reap it, so its end keeps its status for the side that adopts it,
# and the parent's end does not kill it.
#
# The copy re-makes its channels from DIR's named pipes (cmd, out, ev,
# and con for the console), which the adopting side made and opened
# first: the connections R holds are closed and opened again on them,
# and fds 0, 1 and 2 are closed and opened again in that order, each open
# taking the lowest free number. setsid() puts it in its own session and
# process group, so that an interrupt of either session reaches its own.
#
# R's temporary directory (tempdir()) is removed when R ends; a copy
# ending would remove its parent's. So the parent moves it aside for a
# moment, the copy asks tempdir(check = TRUE) for one of its own, which
# R makes when its own is gone, and puts the parent's back, while the
# parent waits for it (at most fork_wait seconds, then it puts it back
# itself).
#
# The parent answers {"op": "fork", "nonce", "pid", "threads", "shared",
# "children"} (what the copy did not get: the parent's other threads, a
# BLAS pool; what it shares: open sockets, pipes and files; what it does
# not carry: the parent's child processes) and goes on; the copy says
# hello on its own channels, as a worker that just started, with
# "forked": true, and the cookie in its environment: what it starts is
# the adopting session's.

fork_list <- 8L    # names given of each kind; the rest counted
fork_words <- 80L  # characters of each name
fork_wait <- 10    # seconds the parent waits for the copy to give its temporary directory back

# fork_args reads a fork's arguments: list(dir, sentinel, cookie), or
# NULL.
fork_args <- function(raw) {
  text <- tryCatch(rawToChar(raw), error = function(e) "")
  Encoding(text) <- "UTF-8"
  field <- function(key) {
    m <- regmatches(text, regexec(paste0('"', key, '"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"'), text, perl = TRUE))[[1L]]
    if (length(m) < 2L) NULL else json_unescape(m[2L])
  }
  dir <- field("dir")
  marker <- field("sentinel")
  if (is.null(dir) || is.null(marker) || !nzchar(dir) || !nzchar(marker)) return(NULL)
  cookie <- field("cookie")
  list(dir = dir, sentinel = marker, cookie = if (is.null(cookie)) "" else cookie)
}

# fork_libc is libc's fork() and setsid(), from the libc this process
# maps (/proc/self/maps), loaded once.
fork_libc <- function() {
  if (!is.null(st$libc)) return(st$libc)
  maps <- readLines("/proc/self/maps", warn = FALSE)
  paths <- unique(sub("^[^/]*", "", maps[grepl(" /", maps, fixed = TRUE)]))
  libc <- paths[grepl("/(libc[.]so[.0-9]*|libc-[0-9.]+[.]so|ld-musl-[^/]*[.]so[.0-9]*)$", paths)]
  if (length(libc) == 0L) stop("no libc is mapped into this process")
  dll <- dyn.load(libc[1L], local = TRUE, now = TRUE)
  st$libc <- list(fork = getNativeSymbolInfo("fork", dll), setsid = getNativeSymbolInfo("setsid", dll))
  st$libc
}

# fork_cut holds names to fork_words characters, saying the cut with an
# ellipsis (the driver bounds them again where they enter).
fork_cut <- function(s) {
  s <- enc2utf8(as.character(s))
  bad <- !validUTF8(s)
  s[bad] <- iconv(s[bad], "UTF-8", "UTF-8", sub = "byte")
  n <- nchar(s, allowNA = TRUE)
  long <- !is.na(n) & n > fork_words
  s[long] <- paste0(substr(s[long], 1L, fork_words - 1L), "\u2026")
  s
}

fork_read <- function(path) {
  tryCatch(suppressWarnings(readLines(path, n = 1L, warn = FALSE))[1L],
           error = function(e) NA_character_)
}

# fork_children are the processes whose parent this one is, as pids.
fork_children <- function() {
  tasks <- list.files("/proc/self/task")
  found <- character(0L)
  for (tid in tasks) {
    line <- fork_read(sprintf("/proc/self/task/%s/children", tid))
    if (!is.na(line) && nzchar(line)) found <- c(found, strsplit(trimws(line), " +")[[1L]])
  }
  unique(found)
}

# fork_pool says which threaded BLAS or OpenMP library is loaded, if any:
# whose pool an unnamed thread most likely is.
fork_pool <- function() {
  maps <- tryCatch(readLines("/proc/self/maps", warn = FALSE), error = function(e) character(0L))
  libs <- unique(basename(sub("^[^/]*", "", maps[grepl(" /", maps, fixed = TRUE)])))
  libs <- libs[grepl("^lib(openblas|mkl_|blis|gomp|iomp|omp)", libs)]
  if (length(libs) == 0L) "" else sprintf(" (BLAS? %s is loaded)", libs[1L])
}

# fork_facts is what a fork taken now leaves behind or shares, as data:
# the threads besides this one (a BLAS pool: not copied), the open
# sockets, pipes and files (shared with the copy), the child processes
# (not the copy's). The worker's own channels are not counted.
fork_facts <- function() {
  me <- as.character(Sys.getpid())
  threads <- character(0L)
  own <- fork_read(sprintf("/proc/self/task/%s/comm", me))
  pool <- NULL
  for (tid in setdiff(list.files("/proc/self/task"), me)) {
    name <- fork_read(sprintf("/proc/self/task/%s/comm", tid))
    if (is.na(name) || identical(name, own)) {
      # Unnamed (it kept the process's name): most likely a threaded
      # BLAS's or OpenMP's pool, named by the library if one is loaded.
      if (is.null(pool)) pool <- fork_pool()
      name <- sprintf("unnamed thread %s%s", tid, pool)
    }
    threads <- c(threads, name)
  }
  shared <- character(0L)
  fds <- list.files("/proc/self/fd")
  fds <- fds[order(suppressWarnings(as.integer(fds)))]
  targets <- Sys.readlink(file.path("/proc/self/fd", fds))
  for (i in seq_along(fds)) {
    target <- targets[i]
    if (fds[i] %in% c("0", "1", "2") || is.na(target) || !nzchar(target) || target %in% st$channels) next
    if (startsWith(target, "socket:")) {
      shared <- c(shared, sprintf("socket (fd %s)", fds[i]))
    } else if (startsWith(target, "pipe:")) {
      shared <- c(shared, sprintf("pipe (fd %s)", fds[i]))
    } else if (startsWith(target, "/") && !startsWith(target, "/proc/") &&
               !(target %in% c("/dev/null", "/dev/urandom"))) {
      shared <- c(shared, target)
    }
  }
  children <- character(0L)
  for (pid in fork_children()) {
    name <- fork_read(sprintf("/proc/%s/comm", pid))
    children <- c(children, sprintf("%s (pid %s)", if (is.na(name)) "?" else name, pid))
  }
  facts <- list()
  kinds <- list(threads = threads, shared = shared, children = children)
  for (key in names(kinds)) {
    items <- kinds[[key]]
    if (length(items) == 0L) next
    facts[[key]] <- as.list(fork_cut(items[seq_len(min(length(items), fork_list))]))
    facts[[paste0(key, "_total")]] <- length(items)
  }
  facts
}

# fork_command serves a "fork" command: TRUE in the copy, on its own
# channels by then; FALSE in the parent once it answered.
fork_command <- function(cmd) {
  fail <- function(why) {
    send(list(op = "fork", nonce = cmd$nonce, error = why))
    FALSE
  }
  into <- fork_args(cmd$args)
  if (is.null(into)) return(fail("a fork needs a directory and an end marker"))
  if (!file.exists(sprintf("/proc/self/task/%d/children", Sys.getpid()))) {
    return(fail("R forks only where the kernel lists a process's children (Linux 3.5 or newer, /proc/PID/task/TID/children)"))
  }
  libc <- tryCatch(fork_libc(), error = function(e) e)
  if (inherits(libc, "error")) {
    return(fail(paste("R cannot fork here: cannot load libc's fork():", conditionMessage(libc))))
  }
  facts <- tryCatch(fork_facts(), error = function(e) list())
  flush_all(mark = FALSE)
  tmp <- tempdir()
  aside <- paste0(tmp, "-fork-", Sys.getpid())
  moved <- isTRUE(suppressWarnings(file.rename(tmp, aside)))
  me <- Sys.getpid()
  before <- fork_children()
  forked <- tryCatch({
    .C(libc$fork)
    TRUE
  }, error = function(e) e)
  if (Sys.getpid() != me) {
    fork_copy(into, libc, tmp, aside, moved) # does not return if it fails
    return(TRUE)
  }
  new <- setdiff(fork_children(), before)
  if (moved) {
    # The copy gives the directory back once it has its own, unless it
    # ended first.
    until <- Sys.time() + fork_wait
    live <- function() {
      s <- fork_read(sprintf("/proc/%s/stat", new[1L]))
      !is.na(s) && !grepl("^.*[)] [ZX]", s)
    }
    while (length(new) && !dir.exists(tmp) && Sys.time() < until && live()) Sys.sleep(0.005)
    if (!dir.exists(tmp)) suppressWarnings(file.rename(aside, tmp))
  }
  if (inherits(forked, "error")) return(fail(paste("fork failed:", conditionMessage(forked))))
  if (length(new) == 0L) return(fail("fork failed: no child process was made (too many processes, or too little memory?)"))
  if (length(new) > 1L) {
    # Another child began meanwhile (a process the session started):
    # the copy is the newest.
    start <- vapply(new, function(pid) {
      s <- fork_read(sprintf("/proc/%s/stat", pid))
      f <- strsplit(sub("^.*[)] ", "", s), " ", fixed = TRUE)[[1L]]
      suppressWarnings(as.numeric(f[20L]))
    }, 0)
    new <- new[which.max(start)]
  }
  if (!moved) {
    # The copy could not be given its own: said first among what both hold.
    facts$shared <- c(list(fork_cut(paste("tempdir(), removed by the first to end:", tmp))),
                      facts$shared)[seq_len(min(fork_list, length(facts$shared) + 1L))]
    facts$shared_total <- max(0L, facts$shared_total) + 1L
  }
  send(c(list(op = "fork", nonce = cmd$nonce, pid = as.numeric(new)), facts))
  FALSE
}

# fork_copy makes the copy its own: a temporary directory, a session and
# process group, and channels on DIR's pipes. A copy that cannot ends at
# once: the side adopting it sees its channels close.
fork_copy <- function(into, libc, tmp, aside, moved) {
  if (moved) {
    tryCatch(tempdir(check = TRUE), error = function(e) NULL)
    suppressWarnings(file.rename(aside, tmp))
  }
  own_tmp <- !identical(tempdir(), tmp)
  ok <- tryCatch({
    .C(libc$setsid)
    fork_channels(into$dir)
    TRUE
  }, error = function(e) FALSE)
  if (!ok) {
    # Ended without R's clean-up unless the temporary directory it
    # would remove is the copy's own.
    if (own_tmp) quit(save = "no", status = 70L, runLast = FALSE)
    tools::pskill(Sys.getpid(), tools::SIGKILL)
  }
  st$sentinel <- charToRaw(into$sentinel)
  st$pid <- Sys.getpid()
  key <- sub("=.*$", "", into$cookie)
  if (nzchar(key) && grepl("=", into$cookie, fixed = TRUE)) {
    # What the copy starts is its session's.
    do.call(Sys.setenv, stats::setNames(list(sub("^[^=]*=", "", into$cookie)), key))
  }
  hello <- st$hello
  hello$pid <- st$pid
  hello$forked <- TRUE
  send(hello)
}

# fork_channels points the copy's channels at dir's pipes: the command
# and event connections, fd 0 if a console, and fds 1 and 2 (R's own
# output and its subprocesses'), in that order, as the adopting side
# expects them.
fork_channels <- function(dir) {
  pipe_path <- function(name) file.path(dir, name)
  onto <- function(fd, name, mode) {
    con <- file(pipe_path(name), mode, raw = TRUE)
    if (!identical(Sys.readlink(sprintf("/proc/self/fd/%d", fd)), pipe_path(name))) {
      stop(sprintf("the fork's %s did not open as fd %d", name, fd))
    }
    con
  }
  close(st$commands)
  st$commands <- file(pipe_path("cmd"), "reb", raw = TRUE)
  closeFD <- get("closeFD", envir = asNamespace("parallel"))
  if (file.exists(pipe_path("con"))) {
    closeFD(0L)
    st$console <- onto(0L, "con", "rb")
  }
  close(st$out)
  closeFD(c(1L, 2L))
  st$out <- onto(1L, "out", "ab")
  st$err <- onto(2L, "out", "ab")
  close(st$events)
  st$events <- file(pipe_path("ev"), "web", raw = TRUE)
  st$channels <- pipe_path(c("cmd", "con", "out", "ev"))
}
