# polyrepl's bash worker, its looks (polyrepl vars): the session's
# variables and functions, one line each, or an array's items. Written
# ahead of worker.bash with traps.bash; it only defines.
#
# A look reads variables through a nameref and their attributes with
# ${ref@a} (bash 4.4+), and a function's text with declare -f: no user
# code runs, nothing forks, and =~ is not used (it would set the user's
# BASH_REMATCH). RANDOM and SRANDOM are not read (that would draw a
# number). The session's names are those names lists: not the
# environment the shell started with, nor bash's own, nor the worker's,
# unless all.

# __polyrepl_cut sets __polyrepl_j to $1 cut to __polyrepl_width
# characters, the cut said with "…".
__polyrepl_cut() {
	if ((${#1} > __polyrepl_width)); then
		__polyrepl_j="${1:0:__polyrepl_width-1}…"
	else
		__polyrepl_j=$1
	fi
}

# __polyrepl_count sets __polyrepl_j to "$1 $2s" ("1 $2").
__polyrepl_count() {
	if (($1 == 1)); then __polyrepl_j="1 $2"; else __polyrepl_j="$1 $2s"; fi
}

# __polyrepl_target sets __polyrepl_j to the name nameref $1 refers to.
# (${!name} of a nameref named in a variable gives its target's value:
# declare -p says the target's name.)
__polyrepl_target() {
	builtin declare -p -- "$1" >|"$__polyrepl_tmp.v" 2>/dev/null || :
	IFS= builtin read -r __polyrepl_j <"$__polyrepl_tmp.v" || :
	__polyrepl_j=${__polyrepl_j#*=}
	__polyrepl_j=${__polyrepl_j#\"}
	__polyrepl_j=${__polyrepl_j%\"}
}

# __polyrepl_item is one item of an array as a preview writes it: quoted
# when it is empty or holds a blank.
__polyrepl_item() {
	if [[ -z $1 || $1 == *[[:space:]\"]* ]]; then
		__polyrepl_j="\"${1:0:40}\""
	else
		__polyrepl_j=${1:0:40}
	fi
}

# __polyrepl_vline appends to __polyrepl_lines the line for variable or
# function $1 (kind $2: v or f). Its temporaries are __polyrepl_vlist's
# locals (declared once a look: a line costs tens of microseconds).
__polyrepl_vline() {
	__polyrepl_t= __polyrepl_size= __polyrepl_prev= __polyrepl_members=false __polyrepl_c=0 __polyrepl_s=
	if [[ $2 == f ]]; then
		builtin declare -f -- "$1" >|"$__polyrepl_tmp.f" 2>/dev/null || :
		builtin mapfile -t __polyrepl_l <"$__polyrepl_tmp.f"
		__polyrepl_t=function __polyrepl_size="${#__polyrepl_l[@]} lines"
		__polyrepl_prev=${__polyrepl_l[2]-}
		__polyrepl_prev=${__polyrepl_prev#"${__polyrepl_prev%%[![:space:]]*}"}
		((${#__polyrepl_l[@]} <= 4)) || __polyrepl_prev+=" …"
	elif [[ $1 == RANDOM || $1 == SRANDOM ]]; then
		__polyrepl_t=integer # reading it, or its attributes, would draw a number
	elif [[ -R $1 ]]; then
		__polyrepl_target "$1"
		__polyrepl_t=nameref __polyrepl_prev="→ $__polyrepl_j"
	else
		builtin local -n __polyrepl_r="$1"
		__polyrepl_a=${__polyrepl_r@a}
		case $__polyrepl_a in
		*A*)
			__polyrepl_t="associative array" __polyrepl_size="${#__polyrepl_r[@]} keys" __polyrepl_members=true
			for __polyrepl_k in "${!__polyrepl_r[@]}"; do
				((__polyrepl_c++ < 20)) || break
				__polyrepl_item "${__polyrepl_r[$__polyrepl_k]}"
				__polyrepl_s+=" [$__polyrepl_k]=$__polyrepl_j"
			done
			__polyrepl_prev="(${__polyrepl_s# })"
			;;
		*a*)
			__polyrepl_t=array __polyrepl_size="${#__polyrepl_r[@]} items" __polyrepl_members=true
			for __polyrepl_k in "${__polyrepl_r[@]:0:20}"; do
				__polyrepl_item "$__polyrepl_k"
				__polyrepl_s+=" $__polyrepl_j"
			done
			__polyrepl_prev="(${__polyrepl_s# })"
			;;
		*i*)
			__polyrepl_t=integer __polyrepl_prev=$__polyrepl_r
			;;
		*)
			__polyrepl_t=string __polyrepl_size="${#__polyrepl_r} characters" __polyrepl_prev="\"${__polyrepl_r:0:__polyrepl_width}\""
			;;
		esac
		[[ $__polyrepl_a != *x* ]] || __polyrepl_t+=", exported"
	fi
	[[ $__polyrepl_size != "1 "* ]] || __polyrepl_size=${__polyrepl_size%s}
	if [[ $1 == *[!$__polyrepl_word]* ]]; then
		__polyrepl_json "$1"
		__polyrepl_s="{\"name\":$__polyrepl_j,\"type\":\"$__polyrepl_t\""
	else
		__polyrepl_s="{\"name\":\"$1\",\"type\":\"$__polyrepl_t\""
	fi
	[[ -z $__polyrepl_size ]] || __polyrepl_s+=",\"size\":\"$__polyrepl_size\""
	if [[ -n $__polyrepl_prev ]]; then
		((${#__polyrepl_prev} <= __polyrepl_width)) || __polyrepl_prev="${__polyrepl_prev:0:__polyrepl_width-1}…"
		__polyrepl_json "$__polyrepl_prev"
		__polyrepl_s+=",\"preview\":$__polyrepl_j"
	fi
	__polyrepl_lines+="${__polyrepl_lines:+,}$__polyrepl_s,\"members\":$__polyrepl_members}"
}

# __polyrepl_vnames fills __polyrepl_all with the sorted names a look
# lists (all: every variable and function but the worker's) and
# __polyrepl_kind with whether each is a v(ariable) or f(unction).
__polyrepl_vnames() {
	builtin local -a __polyrepl_v __polyrepl_f __polyrepl_odd __polyrepl_l
	builtin local __polyrepl_n
	if [[ -z $1 ]]; then
		__polyrepl_names # (it keeps its sorted list and kinds)
		__polyrepl_all=("${__polyrepl_list[@]}")
		builtin return 0
	fi
	builtin compgen -v -X '__polyrepl_*' >|"$__polyrepl_tmp.v"
	builtin mapfile -t __polyrepl_v <"$__polyrepl_tmp.v"
	builtin compgen -A function -X '__polyrepl_*' >|"$__polyrepl_tmp.f"
	builtin mapfile -t __polyrepl_f <"$__polyrepl_tmp.f"
	__polyrepl_kind=()
	for __polyrepl_n in "${__polyrepl_f[@]}"; do __polyrepl_kind[$__polyrepl_n]=f; done
	for __polyrepl_n in "${__polyrepl_v[@]}"; do __polyrepl_kind[$__polyrepl_n]=v; done
	__polyrepl_sort
}

# __polyrepl_vlist sets __polyrepl_lines to the lines of the first $1 of
# __polyrepl_all.
__polyrepl_vlist() {
	builtin local __polyrepl_n __polyrepl_t __polyrepl_size __polyrepl_prev __polyrepl_members __polyrepl_a __polyrepl_k __polyrepl_c __polyrepl_s
	builtin local -a __polyrepl_l
	__polyrepl_lines=
	for __polyrepl_n in "${__polyrepl_all[@]:0:$1}"; do
		__polyrepl_vline "$__polyrepl_n" "${__polyrepl_kind[$__polyrepl_n]-v}"
	done
}

# __polyrepl_vitems sets __polyrepl_lines to the first $2 items of array
# $1 and __polyrepl_total to their number, or __polyrepl_j to why not.
__polyrepl_vitems() {
	builtin local __polyrepl_k __polyrepl_c=0 __polyrepl_s
	if [[ $1 != [A-Za-z_]* || $1 == *[!$__polyrepl_word]* || $1 == __polyrepl_* ]]; then
		__polyrepl_j="bash: $1: not a valid identifier (a path is an array's name)"
		builtin return 1
	fi
	if [[ -R $1 ]]; then
		__polyrepl_target "$1"
		__polyrepl_j="$1 is a nameref to $__polyrepl_j: look at $__polyrepl_j"
		builtin return 1
	fi
	builtin local -n __polyrepl_r="$1"
	case ${__polyrepl_r@a} in
	*[aA]*) ;;
	*)
		if [[ -v $1 || -n ${__polyrepl_r@a} ]]; then
			__polyrepl_j="$1 is not an array: a path names an array, whose items a look lists"
		elif builtin declare -F -- "$1" >/dev/null; then
			__polyrepl_j="$1 is a function: a path names an array, whose items a look lists"
		else
			__polyrepl_j="$1: no such variable"
		fi
		builtin return 1
		;;
	esac
	__polyrepl_lines= __polyrepl_total=${#__polyrepl_r[@]}
	for __polyrepl_k in "${!__polyrepl_r[@]}"; do
		((__polyrepl_c++ < $2)) || break
		__polyrepl_s="${__polyrepl_r[$__polyrepl_k]}"
		__polyrepl_json "[$__polyrepl_k]"
		__polyrepl_lines+="${__polyrepl_lines:+,}{\"name\":$__polyrepl_j,\"type\":\"string\""
		__polyrepl_count ${#__polyrepl_s} character
		__polyrepl_lines+=",\"size\":\"$__polyrepl_j\""
		__polyrepl_cut "\"$__polyrepl_s\""
		__polyrepl_json "$__polyrepl_j"
		__polyrepl_lines+=",\"preview\":$__polyrepl_j}"
	done
	builtin return 0
}

# __polyrepl_look answers a "vars" command: JSON arguments $1, nonce $2.
__polyrepl_look() {
	builtin local __polyrepl_path= __polyrepl_every= __polyrepl_limit=100 __polyrepl_width=80 __polyrepl_lines= __polyrepl_total=0 __polyrepl_x
	builtin local -a __polyrepl_all
	__polyrepl_x=${1#*\"path\":\"} && [[ $__polyrepl_x == "$1" ]] || __polyrepl_path=${__polyrepl_x%%\"*}
	[[ $1 != *\"all\":true* ]] || __polyrepl_every=1
	__polyrepl_x=${1#*\"limit\":} && __polyrepl_x=${__polyrepl_x%%[!0-9]*} && [[ -z $__polyrepl_x ]] || __polyrepl_limit=$__polyrepl_x
	__polyrepl_x=${1#*\"preview\":} && __polyrepl_x=${__polyrepl_x%%[!0-9]*} && [[ -z $__polyrepl_x ]] || __polyrepl_width=$__polyrepl_x
	if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4))); then
		__polyrepl_json "bash $BASH_VERSION cannot look at its variables without running code: it needs bash 4.4"
		__polyrepl_send "{\"op\":\"vars\",\"nonce\":\"$2\",\"error\":$__polyrepl_j}"
		builtin return 0
	fi
	if [[ -z $__polyrepl_path ]]; then
		__polyrepl_vnames "$__polyrepl_every"
		__polyrepl_vlist "$__polyrepl_limit"
		__polyrepl_total=${#__polyrepl_all[@]}
	elif ! __polyrepl_vitems "$__polyrepl_path" "$__polyrepl_limit"; then
		__polyrepl_json "$__polyrepl_j"
		__polyrepl_send "{\"op\":\"vars\",\"nonce\":\"$2\",\"error\":$__polyrepl_j}"
		builtin return 0
	fi
	__polyrepl_send "{\"op\":\"vars\",\"nonce\":\"$2\",\"vars\":[$__polyrepl_lines],\"total\":$__polyrepl_total}"
}

# __polyrepl_cell_look sets __polyrepl_j to the "vars" and "vars_total"
# fields of a cell's done: the look at the names names() found.
__polyrepl_cell_look() {
	__polyrepl_j=
	((BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4))) || builtin return 0
	builtin local __polyrepl_width=80 __polyrepl_lines=
	builtin local -a __polyrepl_all
	__polyrepl_all=("${__polyrepl_list[@]}")
	__polyrepl_vlist 100
	__polyrepl_j=",\"vars\":[$__polyrepl_lines],\"vars_total\":${#__polyrepl_list[@]}"
}
