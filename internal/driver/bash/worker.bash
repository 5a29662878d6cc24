# polyrepl's bash worker: one session's shell.
#
# The daemon starts it as `bash --norc --noprofile worker.bash SENTINEL` and
# talks to it over three channels (internal/driver/worker has the spec):
#   fd 3  commands in: "exec CELL VALUE_LIMIT NBYTES" and NBYTES of code
#   fd 4  events out, one JSON object per line (hello, done)
#   fd 1  and fd 2: one pipe with everything a cell prints; after a cell the
#         worker writes SENTINEL to it, then reports the cell done.
#
# How it works, and why:
# - It re-executes itself as an interactive shell (-i), with the job-control
#   warnings of a shell without a terminal sent to /dev/null. Interactive, an
#   expansion error (${x:?}, set -u) ends the cell instead of the shell, and
#   error messages read "bash: …" as in a terminal, not "/path/worker: line 9".
# - The loop that reads cells runs at the top level of this script, and a cell
#   is sourced from there (a stub file that evals the code): variables,
#   declare -A, functions, aliases, cd, exports and traps persist as at a
#   prompt. Sourcing also gives the interrupt a level to return to.
# - Interrupt: between cells SIGINT is ignored; while a cell runs the INT trap
#   turns on extdebug and a DEBUG trap that returns 2 before every command of
#   the cell: each function then returns, and finally the sourced cell, which
#   abandons any loop. An external command dies of the SIGINT the daemon sends
#   to the process group; the trap then runs when the shell regains control.
#   Bash drops a SIGINT that came while it waited for a command that then
#   exited normally (it takes it the command handled it): a loop of short
#   commands loses one interrupt in ten so under load. So the daemon's third
#   attempt is signal 40 (a real-time signal, SIGRTMIN+6) to the shell alone,
#   trapped the same way and never dropped: it runs once the command ends.
# - exit is an alias for a function that ends the cell the same way and keeps
#   the session; set -e is honoured by an ERR trap (inherited via set -E) that
#   ends the cell at the failing command instead of letting the shell exit,
#   and is off while a cell unwinds. trap is an alias too (__polyrepl_trap):
#   the user's ERR and INT traps run from the worker's own, DEBUG and RETURN
#   traps are kept and shown but not set (at the worker's top level they
#   would run before its own commands, or with extdebug skip them).
# - The worker's plumbing is put back after each cell, and the cell's note
#   says so: set -E, standard input, output and error (exec >file would hide
#   every later cell's output), and the worker's own trap and exit.
# - A process forked by a cell never takes the worker's part: one that
#   reaches the worker's loop (a top-level return in a pipeline's part, the
#   unwinding inherited with extdebug) ends there.
# - break/continue at a cell's top level would act on the worker's own loop:
#   the loop's condition does the bookkeeping and the loop is nested in more
#   loops, so the session survives them.
# - The protocol fds live at 60-63, above the 3-9 a user's script may take,
#   and the eval closes them for the cell's commands; bash keeps close-on-exec
#   copies meanwhile, which a forked subshell holds until it execs or ends (as
#   a forked Python child would hold the Python worker's).
# - Everything of the worker is named __polyrepl_*, and names hides those.
#   Builtins are called through `builtin`, so that user functions named
#   read, printf, local… don't break it (`builtin local` takes its words as
#   any command does: values quoted, arrays assigned apart). Its own code
#   runs with the user's set -euxvaCf, pipefail and nocasematch off, and
#   puts them back after.
# - Bytes pass through untouched; in a locale that is not UTF-8 (C, POSIX,
#   one not installed) LC_CTYPE becomes C.UTF-8 (as Python does, PEP 538),
#   so ${#s} and children see UTF-8.
# - Known limits, all from running cells sourced: a DEBUG trap does not run
#   inside cells and a RETURN trap runs as each ends; xtrace lines start with
#   ++++; a top-level return ends the cell; BASH_SOURCE and FUNCNAME show
#   the worker's frame. The session's TERM and 40 traps are the worker's; a
#   cell that sets ERR with `builtin trap`, or turns set -E off, lets set -e
#   end the shell in that cell (both are put back after it).
#
# It must stay valid for bash 4.1+, fork nothing per cell and start fast.

if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 1))); then
	echo "polyrepl: $BASH is bash $BASH_VERSION; the bash runtime needs bash 4.1 or newer" >&2
	exit 3
fi

if [[ -z ${__polyrepl_pid-} ]]; then # not when sourced again (see the end)

if [[ $- != *i* ]]; then
	shopt -s execfail
	{ __polyrepl_reexec=1 exec "$BASH" --norc --noprofile -i +o history "$0" "$@"; } 9>&2 2>/dev/null
	echo "polyrepl: cannot start $BASH as an interactive shell" >&2
	exit 3
fi
if [[ ${__polyrepl_reexec-} == 1 ]]; then
	exec 2>&9 9>&-
	unset __polyrepl_reexec
fi

set +o history +m +H
unset HISTFILE
shopt -s execfail expand_aliases
__polyrepl_pid=$BASHPID
__polyrepl_self=$0
# The end marker comes in the environment (older daemons: the first
# argument), out of it before any cell runs.
__polyrepl_sentinel=${POLYREPL_WORKER_SENTINEL:-$1}
unset POLYREPL_WORKER_SENTINEL
set --
BASH_ARGV0=bash # $0 as at a prompt (bash 5+; harmless before)

# 60: commands, 61: events, 62: the output pipe, kept for the end marker
# even if a cell redirects fd 1 for good with `exec >file`.
# 63: the session's standard input (its console), put back likewise.
exec 60<&3 61>&4 62>&1 63<&0 3<&- 4>&-

# UTF-8 whatever the locale: if the one in effect is not (C, POSIX, one not
# installed) and LC_ALL does not force it, LC_CTYPE becomes C.UTF-8, for the
# shell and its children (as Python does, PEP 538).
builtin printf -v __polyrepl_j '\u00e9'
if ((${#__polyrepl_j} != 1)) && [[ -z ${LC_ALL-} ]]; then
	__polyrepl_i=${LC_CTYPE-unset}
	export LC_CTYPE=C.UTF-8 2>/dev/null
	builtin printf -v __polyrepl_j '\u00e9'
	if ((${#__polyrepl_j} != 1)); then # no such locale here either
		if [[ $__polyrepl_i == unset ]]; then unset LC_CTYPE; else LC_CTYPE=$__polyrepl_i; fi
	fi
fi

# The worker's own files, named by its pid in its directory (private to the
# daemon): the stub a cell is sourced from (.stub), and room for the output
# of builtins (.v, .f) without a command substitution's fork. The shell
# removes them when it ends (__polyrepl_quit): unlinking them now would cost
# a fork and an exec of rm on every start. Those of workers that were killed
# outright are removed here, which costs nothing when there are none.
__polyrepl_tmp=${__polyrepl_self%/*}
[[ $__polyrepl_self == */* ]] || __polyrepl_tmp=.
[[ $__polyrepl_tmp == /* ]] || __polyrepl_tmp=$PWD/$__polyrepl_tmp
__polyrepl_tmp+=/.bash-$$
__polyrepl_stub=$__polyrepl_tmp.stub
# The eval's redirections hide the worker's fds from the cell's commands;
# bash puts them back when it returns.
__polyrepl_stub_text='\builtin eval "$__polyrepl_code" 60<&- 61>&- 62>&- 63<&-'
for __polyrepl_j in "${__polyrepl_tmp%/*}"/.bash-*.stub; do
	__polyrepl_j=${__polyrepl_j%.stub}
	[[ -e $__polyrepl_j.stub && ! -e /proc/${__polyrepl_j##*-} ]] || continue
	command rm -f -- "$__polyrepl_j.v" "$__polyrepl_j.f" "$__polyrepl_j.stub" 2>/dev/null
done
# (No fallback to a shared /tmp, where a planted symlink could aim >| at
# another file: the daemon has just written the worker here.)
if ! builtin printf '%s\n' "$__polyrepl_stub_text" >|"$__polyrepl_stub"; then
	echo "polyrepl: the bash worker cannot write its files next to itself (${__polyrepl_tmp%/*})" >&2
	exit 3
fi

# Per-cell state, all set so that a user's set -u cannot trip the worker.
__polyrepl_running=   # set while a cell's code runs
__polyrepl_ran=       # set once the cell's source returned to the loop
__polyrepl_cell=0
__polyrepl_code=
__polyrepl_status=0
__polyrepl_uflags=    # the user's $- at the end of the last cell
__polyrepl_before=    # and before this one
__polyrepl_ucase=     # the user had nocasematch on
__polyrepl_upipe=     # the user had pipefail on
__polyrepl_stop=      # interrupted, exit or errexit: why the cell was cut short
__polyrepl_stop_status=0
__polyrepl_errexit=   # set -e stopped the cell: turn it back on afterwards
__polyrepl_note=
__polyrepl_nul=       # the cell had a NUL byte and was not run
__polyrepl_depth=1    # ${#BASH_SOURCE[@]} of the loop that sources cells
__polyrepl_saved_ext=
__polyrepl_saved_T=
__polyrepl_armed=     # the unwinding is on (__polyrepl_unwind_on)
__polyrepl_j=
__polyrepl_last_vs= __polyrepl_last_fs= __polyrepl_last_names=
__polyrepl_list=()    # the session's names, sorted, for a look (vars.bash)
declare -A __polyrepl_kind=()
__polyrepl_word=ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_ # no ranges: locales
__polyrepl_bs='\'
__polyrepl_q='"'
__polyrepl_ctl=()
__polyrepl_esc=()
for ((__polyrepl_i = 1; __polyrepl_i < 32; __polyrepl_i++)); do
	builtin printf -v __polyrepl_j '%02x' "$__polyrepl_i"
	builtin printf -v "__polyrepl_ctl[__polyrepl_i-1]" "\\x$__polyrepl_j"
	__polyrepl_esc[__polyrepl_i-1]="\\u00$__polyrepl_j"
done
__polyrepl_esc[7]='\b' __polyrepl_esc[8]='\t' __polyrepl_esc[9]='\n'
__polyrepl_esc[11]='\f' __polyrepl_esc[12]='\r'
unset __polyrepl_i

# __polyrepl_json sets __polyrepl_j to $1 as a JSON string. Whole-string
# replacements, not a loop over characters, so long strings stay cheap.
__polyrepl_json() {
	builtin local s="$1" i
	if [[ $s == *[\"\\[:cntrl:]]* ]]; then
		s=${s//"$__polyrepl_bs"/"$__polyrepl_bs$__polyrepl_bs"}
		s=${s//"$__polyrepl_q"/"$__polyrepl_bs$__polyrepl_q"}
		if [[ $s == *[[:cntrl:]]* ]]; then
			for ((i = 0; i < 31; i++)); do
				s=${s//"${__polyrepl_ctl[i]}"/"${__polyrepl_esc[i]}"}
			done
		fi
	fi
	__polyrepl_j="\"$s\""
}

__polyrepl_send() {
	builtin printf '%s\n' "$1" >&61
}

# __polyrepl_own_options saves the user's shell options that would change
# how the worker's own code runs, and switches them off.
__polyrepl_own_options() {
	builtin set +euaCfvxk
	__polyrepl_uflags=$1
	__polyrepl_ucase= __polyrepl_upipe=
	if builtin shopt -q nocasematch; then
		__polyrepl_ucase=1
		builtin shopt -u nocasematch
	fi
	if builtin shopt -qo pipefail; then
		__polyrepl_upipe=1
		builtin set +o pipefail
	fi
}

# __polyrepl_user_options puts the user's options back, last thing before a
# cell runs; xtrace is turned on by the cell's code itself (see start_cell).
__polyrepl_user_options() {
	[[ -z $__polyrepl_ucase ]] || builtin shopt -s nocasematch
	[[ -z $__polyrepl_upipe ]] || builtin set -o pipefail
	[[ $__polyrepl_uflags != *a* ]] || builtin set -a
	[[ $__polyrepl_uflags != *C* ]] || builtin set -C
	[[ $__polyrepl_uflags != *k* ]] || builtin set -k
	[[ $__polyrepl_uflags != *f* ]] || builtin set -f
	[[ $__polyrepl_uflags != *u* ]] || builtin set -u
	[[ $__polyrepl_uflags != *e* ]] || builtin set -e
	builtin return 0
}

# __polyrepl_quit ends the shell, removing the worker's files. rm ignores
# SIGTERM, which the daemon sends to every process of the session, new ones
# too, while it ends it.
__polyrepl_quit() {
	builtin trap '' TERM
	command rm -f -- "$__polyrepl_tmp.v" "$__polyrepl_tmp.f" "$__polyrepl_stub" 2>/dev/null
	builtin exit "$1"
}

# __polyrepl_next_cell reads the next cell into __polyrepl_code; at the end
# of the commands it ends the shell.
__polyrepl_next_cell() {
	builtin local __polyrepl_rop __polyrepl_rcell __polyrepl_rlimit __polyrepl_rsize __polyrepl_rrest
	while :; do
		IFS=' ' builtin read -r -u 60 __polyrepl_rop __polyrepl_rcell __polyrepl_rlimit __polyrepl_rsize __polyrepl_rrest || __polyrepl_quit 0
		if [[ $__polyrepl_rop == vars && -n $__polyrepl_rcell && -z ${__polyrepl_rcell//[0-9]/} && -z ${__polyrepl_rlimit//[0-9a-zA-Z]/} ]]; then
			# A look between cells (vars.bash): nothing runs, nothing
			# printed, nothing assigned. "vars NBYTES NONCE", then NBYTES
			# of JSON, read as bytes (as a cell's code, below).
			__polyrepl_rsize=
			if ((__polyrepl_rcell == 0)); then
				:
			elif [[ -n ${LC_ALL-} ]]; then
				LC_ALL=C IFS= builtin read -r -N "$__polyrepl_rcell" -t 5 -u 60 __polyrepl_rsize || __polyrepl_quit 0
			else
				LC_CTYPE=C IFS= builtin read -r -N "$__polyrepl_rcell" -t 5 -u 60 __polyrepl_rsize || __polyrepl_quit 0
			fi
			__polyrepl_look "$__polyrepl_rsize" "$__polyrepl_rlimit"
			continue
		fi
		[[ $__polyrepl_rop == exec && -n $__polyrepl_rsize && -z ${__polyrepl_rsize//[0-9]/} && -n $__polyrepl_rcell && -z ${__polyrepl_rcell//[0-9]/} ]] || continue
		__polyrepl_cell=$__polyrepl_rcell __polyrepl_code= __polyrepl_note= __polyrepl_nul=
		# The exec's nonce, echoed in the result (letters and digits only).
		__polyrepl_nonce=${__polyrepl_rrest%% *}
		[[ -z ${__polyrepl_nonce//[0-9a-zA-Z]/} ]] || __polyrepl_nonce=
		if ((__polyrepl_rsize > 0)); then
			# -N counts characters: in the C locale, bytes. It drops NUL
			# bytes and reads on to make up the count, so a cell with a
			# NUL leaves it waiting for bytes that never come: the timeout
			# catches that (the whole cell is in the pipe already). The C
			# locale goes in LC_CTYPE unless LC_ALL rules: putting LC_ALL
			# back when LANG names a locale not installed would leave C.
			__polyrepl_rrest=0
			if [[ -n ${LC_ALL-} ]]; then
				LC_ALL=C IFS= builtin read -r -N "$__polyrepl_rsize" -t $((5 + __polyrepl_rsize / 1000000)) -u 60 __polyrepl_code || __polyrepl_rrest=$?
			else
				LC_CTYPE=C IFS= builtin read -r -N "$__polyrepl_rsize" -t $((5 + __polyrepl_rsize / 1000000)) -u 60 __polyrepl_code || __polyrepl_rrest=$?
			fi
			if ((__polyrepl_rrest != 0)); then
				((__polyrepl_rrest > 128)) || __polyrepl_quit 0
				__polyrepl_nul=1 __polyrepl_code=
				__polyrepl_note="the cell contains NUL bytes, which bash cannot run; nothing was run"
			fi
		fi
		__polyrepl_depth=$((${#BASH_SOURCE[@]} - 1))
		builtin return 0
	done
}

# __polyrepl_start_cell arms the interrupt and the user's options, last.
__polyrepl_start_cell() {
	__polyrepl_ran= __polyrepl_stop= __polyrepl_errexit= __polyrepl_before=$__polyrepl_uflags
	if [[ $__polyrepl_uflags == *[xv]* && -z $__polyrepl_nul ]]; then
		# Turned on inside the cell, so that neither the worker's own
		# lines nor the eval of the whole cell are traced or echoed.
		__polyrepl_code="builtin set -${__polyrepl_uflags//[!xv]/}; $__polyrepl_code"
	fi
	if ! [[ -f $__polyrepl_stub ]]; then # removed under a live session
		builtin printf '%s\n' "$__polyrepl_stub_text" >|"$__polyrepl_stub"
	fi
	# A SIGINT or signal 40 that came just as the last cell's end made
	# them ignored stays pending in bash for good (neither ignoring them
	# nor its check of pending traps clears it), and cuts this cell's
	# first `wait` short (status 168) without running the trap. One of
	# each sent to itself, trapped by a no-op, runs it away first.
	builtin trap : INT 40
	builtin kill -s INT "$__polyrepl_pid"
	builtin kill -n 40 "$__polyrepl_pid"
	:
	__polyrepl_running=1
	builtin trap "$__polyrepl_int_trap" INT 40
	builtin alias exit=__polyrepl_exit trap=__polyrepl_trap # even after unalias -a
	__polyrepl_user_options
}

# __polyrepl_after_cell runs right after the cell's source returns, with
# its status and the user's $-.
__polyrepl_after_cell() {
	# Only the worker itself goes on: a process the cell forked that got
	# here (a return at the top of a subshell of the cell) ends.
	[[ $BASHPID == "$__polyrepl_pid" ]] || builtin exit "$1"
	__polyrepl_own_options "$2"
	__polyrepl_status=$1 __polyrepl_ran=1
}

# __polyrepl_end_cell reports the cell that just ran, if any: it is the
# condition of the loop, so a cell's `continue` still gets here.
__polyrepl_end_cell() {
	builtin local __polyrepl_st="$?" __polyrepl_names_json
	[[ $BASHPID == "$__polyrepl_pid" ]] || builtin exit "$__polyrepl_st"
	[[ -n ${__polyrepl_running-} ]] || builtin return 0
	builtin trap '' INT 40
	# A failed exec leaves an interactive shell ignoring SIGTERM again.
	builtin trap '__polyrepl_quit 143' TERM
	if [[ -z $__polyrepl_ran ]]; then
		# break or continue at the cell's top level ended it early
		__polyrepl_own_options "$-"
		__polyrepl_status=$__polyrepl_st
		__polyrepl_note="break or continue outside a loop ended the cell"
	fi
	__polyrepl_running=
	if [[ $__polyrepl_uflags == *a* ]]; then # set -a exported what the traps set
		builtin export -n __polyrepl_stop __polyrepl_stop_status __polyrepl_errexit __polyrepl_armed \
			__polyrepl_saved_ext __polyrepl_saved_T __polyrepl_j
	fi
	if [[ -n $__polyrepl_armed ]]; then
		__polyrepl_unwind_off
	fi
	[[ -z $__polyrepl_errexit ]] || __polyrepl_uflags+=e

	builtin local __polyrepl_result=done __polyrepl_err= __polyrepl_flushed=false
	case $__polyrepl_stop in
	interrupted)
		__polyrepl_result=interrupted
		__polyrepl_err='{"type":"SIGINT","message":"interrupted"}'
		;;
	exit)
		if ((__polyrepl_stop_status == 0)); then
			__polyrepl_note="exit was caught: the session stays up (kill or restart it to end it)"
		else
			__polyrepl_result=error
			__polyrepl_err="{\"type\":\"ExitStatus\",\"message\":\"exit status $__polyrepl_stop_status\"}"
			__polyrepl_note="exit $__polyrepl_stop_status was caught: the session stays up (kill or restart it to end it)"
		fi
		;;
	errexit)
		__polyrepl_result=error
		__polyrepl_err="{\"type\":\"ExitStatus\",\"message\":\"exit status $__polyrepl_stop_status\"}"
		__polyrepl_note="set -e stopped the cell at a failing command; the session stays up"
		;;
	*)
		if [[ -n $__polyrepl_nul ]]; then
			__polyrepl_result=error
			__polyrepl_err='{"type":"NulInCode","message":"the cell contains NUL bytes"}'
		elif ((__polyrepl_status != 0)); then
			__polyrepl_result=error
			__polyrepl_err="{\"type\":\"ExitStatus\",\"message\":\"exit status $__polyrepl_status\"}"
		fi
		;;
	esac

	# (Only a cell whose code could have: declare -f and trap -p through
	# files cost what the rest of a cell's end costs.)
	case $__polyrepl_code in *trap* | *exit* | *source* | *unset* | *'. '*) __polyrepl_keep_own ;; esac
	__polyrepl_guard
	__polyrepl_names
	__polyrepl_names_json=$__polyrepl_j
	__polyrepl_cell_look
	__polyrepl_names_json+=$__polyrepl_j
	if builtin printf '%s' "$__polyrepl_sentinel" >&62; then
		__polyrepl_flushed=true
	fi
	# The cell, its nonce and status first: the daemon reads them from the
	# head of an event too long to take.
	builtin local __polyrepl_msg="{\"op\":\"done\",\"cell\":$__polyrepl_cell"
	[[ -z ${__polyrepl_nonce-} ]] || __polyrepl_msg+=",\"nonce\":\"$__polyrepl_nonce\""
	__polyrepl_msg+=",\"status\":\"$__polyrepl_result\""
	[[ -z $__polyrepl_err ]] || __polyrepl_msg+=",\"error\":$__polyrepl_err"
	__polyrepl_msg+=",\"names\":$__polyrepl_names_json"
	if [[ -n $__polyrepl_note ]]; then
		__polyrepl_json "$__polyrepl_note"
		__polyrepl_msg+=",\"note\":$__polyrepl_j"
	fi
	__polyrepl_send "$__polyrepl_msg,\"flushed\":$__polyrepl_flushed}"
	builtin return 0
}

# __polyrepl_names sets __polyrepl_j to the JSON list of the variables and
# functions the user defined, sorted, at most 500: those not there when the
# worker started, less bash's own that appear on use. compgen's output goes
# through a file (no command substitution's fork), one write per name, the
# bulk of a cell's cost: the worker's own names are left out by -X, and when
# the lists are what they were after the last cell, so is the answer.
__polyrepl_names() {
	builtin local __polyrepl_vs __polyrepl_fs
	builtin compgen -v -X '__polyrepl_*' >|"$__polyrepl_tmp.v"
	# (|| : because read -d '' fails at the end of the file, which would
	# run the ERR trap)
	IFS= builtin read -r -d '' __polyrepl_vs <"$__polyrepl_tmp.v" || :
	builtin compgen -A function -X '__polyrepl_*' >|"$__polyrepl_tmp.f"
	IFS= builtin read -r -d '' __polyrepl_fs <"$__polyrepl_tmp.f" || :
	if [[ $__polyrepl_vs == "$__polyrepl_last_vs" && $__polyrepl_fs == "$__polyrepl_last_fs" ]]; then
		__polyrepl_j=$__polyrepl_last_names
		builtin return 0
	fi
	__polyrepl_last_vs=$__polyrepl_vs __polyrepl_last_fs=$__polyrepl_fs

	builtin local -a __polyrepl_v __polyrepl_f __polyrepl_all __polyrepl_odd
	builtin local __polyrepl_n __polyrepl_l __polyrepl_a
	__polyrepl_v=() __polyrepl_f=() __polyrepl_all=() __polyrepl_odd=()
	builtin mapfile -t __polyrepl_l <"$__polyrepl_tmp.v"
	for __polyrepl_n in "${__polyrepl_l[@]}"; do
		[[ -z ${__polyrepl_base_v[$__polyrepl_n]-} ]] || continue
		case $__polyrepl_n in
		BASH_REMATCH | BASH_ARGC | BASH_ARGV | BASH_ARGV0 | FUNCNAME | OLDPWD | COLUMNS | LINES | _) ;;
		*) __polyrepl_v+=("$__polyrepl_n") ;;
		esac
	done
	builtin mapfile -t __polyrepl_l <"$__polyrepl_tmp.f"
	for __polyrepl_n in "${__polyrepl_l[@]}"; do
		[[ -n ${__polyrepl_base_f[$__polyrepl_n]-} ]] || __polyrepl_f+=("$__polyrepl_n")
	done
	__polyrepl_sort
	# What a look lists (vars.bash): all of them, each a v(ariable) or a
	# f(unction).
	__polyrepl_list=("${__polyrepl_all[@]}")
	__polyrepl_kind=()
	for __polyrepl_n in "${__polyrepl_f[@]}"; do __polyrepl_kind[$__polyrepl_n]=f; done
	for __polyrepl_n in "${__polyrepl_v[@]}"; do __polyrepl_kind[$__polyrepl_n]=v; done
	__polyrepl_all=("${__polyrepl_all[@]:0:500}")
	__polyrepl_a=
	for __polyrepl_n in "${__polyrepl_all[@]}"; do
		if [[ $__polyrepl_n == *[!$__polyrepl_word]* ]]; then
			__polyrepl_json "$__polyrepl_n"
			__polyrepl_a+=",$__polyrepl_j"
		else
			__polyrepl_a+=",\"$__polyrepl_n\""
		fi
	done
	__polyrepl_j="[${__polyrepl_a#,}]"
	__polyrepl_last_names=$__polyrepl_j
}

# __polyrepl_sort sets its caller's __polyrepl_all to the names in its
# __polyrepl_v and __polyrepl_f, sorted in byte order whatever the locale
# (compgen sorts by the locale's collation): bash lists the variables
# named by a prefix in strcmp order, so each name becomes a variable
# __polyrepl_N_NAME for a moment. A function name that cannot (a-b) is
# put in its place by _insert.
__polyrepl_sort() {
	__polyrepl_odd=()
	for __polyrepl_n in "${__polyrepl_v[@]}" "${__polyrepl_f[@]}"; do
		if [[ $__polyrepl_n == [!0123456789]* && $__polyrepl_n != *[!$__polyrepl_word]* ]]; then
			builtin printf -v "__polyrepl_N_$__polyrepl_n" x
		else
			__polyrepl_odd+=("$__polyrepl_n")
		fi
	done
	__polyrepl_all=("${!__polyrepl_N_@}")
	((${#__polyrepl_all[@]} == 0)) || builtin unset "${__polyrepl_all[@]}"
	__polyrepl_all=("${__polyrepl_all[@]#__polyrepl_N_}")
	((${#__polyrepl_odd[@]} == 0)) || __polyrepl_insert 2>/dev/null
}

# __polyrepl_insert puts the names in __polyrepl_odd in their places in the
# sorted __polyrepl_all, comparing in the C locale. Its caller sends its
# stderr away: bash warns when it switches back to a locale not installed.
__polyrepl_insert() {
	if [[ -n ${LC_ALL-} ]]; then builtin local LC_ALL=C; else builtin local LC_COLLATE=C; fi
	builtin local n i
	for n in "${__polyrepl_odd[@]}"; do
		for ((i = 0; i < ${#__polyrepl_all[@]}; i++)); do
			[[ ${__polyrepl_all[i]} < $n ]] || break
		done
		[[ ${__polyrepl_all[i]-} == "$n" ]] ||
			__polyrepl_all=("${__polyrepl_all[@]:0:i}" "$n" "${__polyrepl_all[@]:i}")
	done
}

declare -A __polyrepl_own=()
builtin declare -f __polyrepl_trap >|"$__polyrepl_tmp.f"
IFS= builtin read -r -d '' "__polyrepl_own[trap]" <"$__polyrepl_tmp.f"
builtin declare -f __polyrepl_exit >|"$__polyrepl_tmp.f"
IFS= builtin read -r -d '' "__polyrepl_own[exit]" <"$__polyrepl_tmp.f"

# What the user did not define: everything there now.
declare -A __polyrepl_base_v=() __polyrepl_base_f=()
builtin compgen -v >|"$__polyrepl_tmp.v"
builtin mapfile -t __polyrepl_l <"$__polyrepl_tmp.v"
for __polyrepl_n in "${__polyrepl_l[@]}"; do __polyrepl_base_v[$__polyrepl_n]=1; done
builtin compgen -A function >|"$__polyrepl_tmp.f"
builtin mapfile -t __polyrepl_l <"$__polyrepl_tmp.f"
for __polyrepl_n in "${__polyrepl_l[@]}"; do __polyrepl_base_f[$__polyrepl_n]=1; done
unset __polyrepl_n __polyrepl_l

__polyrepl_err_set
builtin trap '__polyrepl_quit 143' TERM # interactive shells ignore it
builtin trap '' INT 40
builtin alias exit=__polyrepl_exit trap=__polyrepl_trap
builtin set -E

__polyrepl_json "$BASH"
__polyrepl_send "{\"op\":\"hello\",\"version\":\"${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}.${BASH_VERSINFO[2]}\",\"executable\":$__polyrepl_j,\"pid\":$$}"

fi # end of the start-up

# The loop. Its condition reports the last cell and reads the next, so that
# a cell's top-level `continue` (or `break 2`, landing in an outer loop)
# still gets its cell reported.
while :; do while :; do while :; do while :; do
	while __polyrepl_end_cell; __polyrepl_next_cell; do
		__polyrepl_start_cell
		. "$__polyrepl_stub"
		{ __polyrepl_after_cell "$?" "$-"; } 2>/dev/null
	done
done; done; done; done
# A cell broke out of all of them: go round again.
__polyrepl_end_cell
. "$__polyrepl_self"
__polyrepl_quit 0
