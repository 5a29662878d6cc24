# polyrepl's bash worker, its first part: how a cell is stopped (the
# interrupt, exit, set -e) and how the session's plumbing is kept from what
# a cell does to it (traps, standard streams, the worker's own functions).
# The driver writes it ahead of worker.bash, whose header says why each is
# done so; it only defines, and is defined again harmlessly when the worker
# sources itself again.

# __polyrepl_unwind_on makes every further command of the cell return (see
# the top of the file); the user's extdebug and set -T come back after. A
# user's DEBUG trap is not active in a sourced cell: bash puts it back when
# the source returns, replacing this one.
__polyrepl_unwind_on() {
	# Armed again (an interrupt again while the cell should be unwinding
	# already, whatever bash did meanwhile), the user's extdebug and set
	# -T stay as saved the first time: a cell never outlives a second
	# interrupt that reaches its trap.
	if [[ -z $__polyrepl_armed ]]; then
		__polyrepl_armed=1 __polyrepl_saved_ext= __polyrepl_saved_T=
		! builtin shopt -q extdebug || __polyrepl_saved_ext=1
		[[ $- != *T* ]] || __polyrepl_saved_T=1
	fi
	# No set -e while the cell unwinds: the unwinding skips the commands
	# of traps too, the ERR trap's set +e among them, and each function
	# and the cell return non-zero. It comes back after the cell.
	if [[ $- == *e* ]]; then
		builtin set +e
		__polyrepl_errexit=1
	fi
	builtin shopt -s extdebug
	builtin trap '{ __polyrepl_unwind; } 2>/dev/null' DEBUG
}

# A process the cell forks once the unwinding is on (a pipeline's part, a
# subshell) inherits the trap with extdebug: it ends there, as of the
# interrupt. Returning would take it out of the sourced cell and into the
# worker's loop, where it would report the cell and read the next one.
__polyrepl_unwind() {
	[[ $BASHPID == "$__polyrepl_pid" ]] || builtin exit 130
	if [[ ${FUNCNAME[1]-} != __polyrepl_* ]] && ((${#BASH_SOURCE[@]} - 1 > __polyrepl_depth)); then
		builtin return 2
	fi
	builtin return 0
}

__polyrepl_unwind_off() {
	builtin trap -p DEBUG >|"$__polyrepl_tmp.v"
	IFS= builtin read -r -d '' __polyrepl_j <"$__polyrepl_tmp.v" || :
	[[ $__polyrepl_j != *__polyrepl_unwind* ]] || builtin trap - DEBUG
	__polyrepl_armed=
	[[ -n $__polyrepl_saved_ext ]] || builtin shopt -u extdebug
	[[ -z $__polyrepl_saved_T ]] || builtin set -T
	builtin set -E # extdebug off took errtrace with it
}

__polyrepl_on_int() {
	[[ -n $__polyrepl_running && $BASHPID == "$__polyrepl_pid" ]] || builtin return 0
	[[ -n $__polyrepl_stop ]] || __polyrepl_stop=interrupted __polyrepl_stop_status=130
	__polyrepl_unwind_on
}

# __polyrepl_on_err is the first part of the ERR trap: under set -e in a
# cell it turns set -e off, or the shell would exit right after the trap
# (whatever else ends the cell meanwhile: an interrupt, an exit), and
# marks the cell to stop there. The user's own ERR trap then runs, seeing
# the failing status it returns, and __polyrepl_err_stop stops the cell.
__polyrepl_on_err() {
	__polyrepl_es=$1 __polyrepl_ue=
	# The user's ERR trap runs for the cell's commands, not the worker's.
	if [[ -n $__polyrepl_uerr && -n $__polyrepl_running ]] && ((${#BASH_SOURCE[@]} - 1 > __polyrepl_depth)); then
		__polyrepl_ue=1
	fi
	if builtin shopt -qo errexit && [[ -n $__polyrepl_running && $BASHPID == "$__polyrepl_pid" ]]; then
		builtin set +e
		__polyrepl_errexit=1
		# (not the cell's end itself failing under set -e)
		if [[ -z $__polyrepl_stop ]] && ((${#BASH_SOURCE[@]} - 1 > __polyrepl_depth)); then
			__polyrepl_stop=errexit __polyrepl_stop_status=$1
		fi
	fi
	builtin return "$1"
}

__polyrepl_ret() { builtin return "$1"; }

__polyrepl_err_stop() {
	[[ $__polyrepl_stop == errexit && -z $__polyrepl_armed && $BASHPID == "$__polyrepl_pid" ]] || builtin return 0
	__polyrepl_unwind_on
}

__polyrepl_exit() {
	builtin local st="$?"
	if builtin declare -F exit >/dev/null; then # the user's own exit()
		__polyrepl_ret "$st"
		\exit "$@"
		builtin return
	fi
	if [[ -z $__polyrepl_running || $BASHPID != "$__polyrepl_pid" ]]; then
		builtin exit "$@"
	fi
	if (($# > 0)); then
		builtin local n="${1#[-+]}"
		if [[ -n $n && -z ${n//[0-9]/} ]]; then
			st=$((10#$n & 255))
			[[ $1 != -* ]] || st=$((-st & 255))
		else
			builtin printf 'bash: exit: %s: numeric argument required\n' "$1" >&2
			st=2
		fi
	fi
	__polyrepl_stop=exit __polyrepl_stop_status=$st
	__polyrepl_unwind_on
	builtin return "$st"
}

# The session's own traps. ERR runs the user's ERR trap between its two
# parts (set -e then ends the cell, not the shell, whatever the user
# traps); INT (and signal 40) runs the user's INT trap, then ends the cell.
__polyrepl_err_trap='{ __polyrepl_on_err "$?"; } 2>/dev/null; [[ -z $__polyrepl_ue ]] || { __polyrepl_ret "$__polyrepl_es"; builtin eval -- "$__polyrepl_uerr"; }; { __polyrepl_err_stop; } 2>/dev/null'
# Without a user's ERR trap, a shorter one (set -v shows it at each
# failing command, as bash shows a trap's text).
__polyrepl_err_short='{ __polyrepl_on_err "$?"; __polyrepl_err_stop; } 2>/dev/null'

# __polyrepl_err_set sets the session's ERR trap, the short one when the
# user has none.
__polyrepl_err_set() {
	if [[ -n $__polyrepl_uerr ]]; then
		builtin trap "$__polyrepl_err_trap" ERR
	else
		builtin trap "$__polyrepl_err_short" ERR
	fi
}
__polyrepl_int_trap='[[ -z $__polyrepl_uint || $BASHPID != "$__polyrepl_pid" ]] || builtin eval -- "$__polyrepl_uint"; { __polyrepl_on_int; } 2>/dev/null'
# (once: the worker may source itself again, and keeps them)
[[ -n ${__polyrepl_pid-} ]] || __polyrepl_uerr= __polyrepl_uint= __polyrepl_udebug= __polyrepl_ureturn= __polyrepl_ue= __polyrepl_es=0

# __polyrepl_trap is `trap` in cells (an alias, like exit). The user's
# ERR and INT traps are kept and run by the session's own; DEBUG and
# RETURN traps are kept and shown but do not run (cells run sourced: at
# the worker's top level they would run, or with extdebug skip, its own
# commands). Every other signal, and -l, go to the builtin; -p and a bare
# trap show the user's traps, not the session's.
__polyrepl_trap() {
	if builtin declare -F trap >/dev/null; then # the user's own trap()
		\trap "$@"
		builtin return
	fi
	builtin local a s u act print= n=0
	builtin local -a rest
	rest=()
	if [[ $1 == -l ]]; then builtin trap "$@"; builtin return; fi
	if [[ $1 == -p ]]; then print=1; builtin shift; fi
	[[ $1 != -- ]] || builtin shift
	(($# > 0)) || print=1
	if [[ -n $print ]]; then
		builtin trap -p "$@" >|"$__polyrepl_tmp.f" || n=1
		while IFS= builtin read -r a; do
			[[ $a == *__polyrepl_* ]] || builtin printf '%s\n' "$a"
		done <"$__polyrepl_tmp.f"
		for s in ERR INT DEBUG RETURN; do
			if (($# > 0)); then
				for a; do
					u=${a^^}
					u=${u#SIG}
					[[ $u != 2 ]] || u=INT
					[[ $u != "$s" ]] || break
				done
				[[ $u == "$s" ]] || continue
			fi
			case $s in ERR) a=$__polyrepl_uerr ;; INT) a=$__polyrepl_uint ;; DEBUG) a=$__polyrepl_udebug ;; RETURN) a=$__polyrepl_ureturn ;; esac
			[[ -n $a ]] || continue
			[[ $s == INT ]] && s=SIGINT
			builtin printf "trap -- '%s' %s\n" "${a//\'/\'\\\'\'}" "$s"
		done
		builtin return "$n"
	fi
	act=$1
	if (($# == 1)); then act=-; else builtin shift; fi
	a=$act
	[[ $a != - ]] || a=
	for s; do
		u=${s^^}
		u=${u#SIG}
		case $u in
		ERR)
			__polyrepl_uerr=$a
			__polyrepl_err_set
			;;
		INT | 2) __polyrepl_uint=$a ;;
		DEBUG) __polyrepl_udebug=$a ;;
		RETURN) __polyrepl_ureturn=$a ;;
		*) rest+=("$s") ;;
		esac
	done
	((${#rest[@]} == 0)) || builtin trap -- "$act" "${rest[@]}"
}

# __polyrepl_guard puts back what a cell changed that the session's own
# plumbing needs, and says so in the cell's note: errtrace (set -e ends
# the shell in a function without the ERR trap), job control (set -m),
# and standard input, output and error redirected or closed for good
# (exec >file would hide every later cell's output; a question is
# answered on standard input).
# It also says when set -e stays on for the cells to come.
__polyrepl_guard() {
	builtin local -a n
	builtin local l
	n=()
	if [[ $__polyrepl_uflags == *e* && $__polyrepl_before != *e* ]]; then
		n+=("set -e stays on: each later cell ends at its first failing command, not the session (set +e turns it off)")
	fi
	if [[ $__polyrepl_uflags != *E* ]]; then
		builtin set -E
		__polyrepl_uflags+=E
		n+=("set -E was turned back on after the cell: set -e needs it to end a cell and not the session")
	fi
	# (`command exec`: `builtin exec >&62` would redirect only the builtin)
	if [[ $- == *m* ]]; then
		builtin set +m
		n+=("set -m was turned off after the cell: without a terminal, job control puts each command in a process group of its own, which an interrupt does not reach")
	fi
	if ! [[ /dev/fd/1 -ef /dev/fd/62 ]]; then
		command exec 1>&62
		n+=("standard output was put back after the cell's exec redirected or closed it: later cells' output would be lost (redirect a block instead: { ...; } >file)")
	fi
	if ! [[ /dev/fd/2 -ef /dev/fd/62 ]]; then
		command exec 2>&62
		n+=("standard error was put back after the cell's exec redirected or closed it: later cells' errors would be lost (redirect a block instead: { ...; } 2>file)")
	fi
	if ! [[ /dev/fd/0 -ef /dev/fd/63 ]]; then
		command exec 0<&63
		n+=("standard input was put back after the cell's exec redirected or closed it: the session answers questions there")
	fi
	for l in "${n[@]}"; do
		__polyrepl_note+=${__polyrepl_note:+; }$l
	done
}

# __polyrepl_keep_own keeps the session's traps and functions the
# session's. A cell's `trap() { …; }` or `exit() { …; }` defines
# __polyrepl_trap or __polyrepl_exit (an alias expands in a definition
# too): it becomes the user's trap or exit, which the session's call, and
# the session's own come back. An ERR, INT, DEBUG or RETURN trap set by
# `builtin trap` is taken as `trap` would have taken it (after the cell:
# in it, set -e may then end the session).
__polyrepl_keep_own() {
	builtin local f t s
	for f in trap exit; do
		builtin declare -f "__polyrepl_$f" >|"$__polyrepl_tmp.f" || :
		IFS= builtin read -r -d '' t <"$__polyrepl_tmp.f" || :
		[[ $t != "${__polyrepl_own[$f]}" ]] || continue
		# (`function NAME`: an alias does not expand there)
		[[ -z $t ]] || builtin eval "function $f ${t#*$'\n'}"
		builtin eval "${__polyrepl_own[$f]}"
	done
	for s in ERR DEBUG RETURN; do # (INT is set again for each cell)
		builtin trap -p "$s" >|"$__polyrepl_tmp.f"
		IFS= builtin read -r -d '' t <"$__polyrepl_tmp.f" || :
		t=${t%$'\n'}
		[[ -n $t && $t != *__polyrepl_* ]] || continue
		t=${t#trap -- }
		builtin eval "__polyrepl_u${s,,}=${t% $s}"
		if [[ $s == ERR ]]; then __polyrepl_err_set; else builtin trap - "$s"; fi
	done
}
