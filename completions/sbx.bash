# bash completion for sbx(1)                                       -*- shell-script -*-
#
# The commands and flags are those of the command table (src/cli/commands.c);
# tests/500-docs.bats checks that they agree with `sbx help`, with the zsh and fish
# completions and with sbx(1). Self-contained: needs neither bash-completion's helpers nor jq.

_sbx_commands="check commit connect cp create destroy diff edit exec fs glob grep help image kill list log logs ls mcp net pause ps read resume run serve stats tools wait write"

_sbx_create_flags="--allow-host --cpus --disk --env --env-file --hostname --image --memory --mount --name \
--net --nofile --package --pids --ptys --read-only --rootfs --seccomp --strict-limits --timeout --ttl \
--workdir"

# The long flags of command $1, sorted.
_sbx_flags() {
        local common="--config --help --json"
        case $1 in
        ps | wait | kill) echo "$common" ;;
        logs) echo "--cursor --follow $common" ;;
        commit) echo "--pause --replace $common" ;;
        check | help | log | ls | cp | diff | fs | net | resume | pause | tools | write) echo "$common" ;;
        connect) echo "--ttl $common" ;;
        create) echo "$_sbx_create_flags --progress $common" ;;
        destroy) echo "--force $common" ;;
        edit) echo "--new-file --old-file --replace-all $common" ;;
        exec) echo "--detach --env --env-file --interactive --max-output --timeout --tty --workdir $common" ;;
        glob) echo "--path $common" ;;
        image) echo "--config --help --insecure-registry --json --progress" ;;
        grep)
                echo "--after-context --before-context --context --fixed-strings --glob" \
                        "--ignore-case --mode $common"
                ;;
        list) echo "--quiet $common" ;;
        stats) echo "--watch $common" ;;
        mcp) echo "--any-session --destroy-on-close --max-output $common" ;;
        serve) echo "--api-key-file --listen $common" ;;
        read) echo "--binary --limit --offset $common" ;;
        run) echo "$_sbx_create_flags --interactive --max-output --progress --tty $common" ;;
        esac
}

# Does option $1 take the next word as its value? (The same in every command that has it.)
_sbx_takes_value() {
        case $1 in
        --after-context | --allow-host | --api-key-file | --before-context | --config | --context | --cpus | --cursor | \
                --disk | --env | --env-file | --glob | --hostname | --image | --limit | --listen | --max-output | \
                --memory | --mode | --mount | --name | --net | --new-file | --nofile | \
                --offset | --old-file | --package | --path | --pids | --progress | --ptys | --rootfs | \
                --seccomp | \
                --timeout | --ttl | --workdir | -A | -B | -C | -e | -t | -w)
                return 0
                ;;
        esac
        return 1
}

# The ids and names of the caller's live sessions, one a line, from `sbx list --json`.
_sbx_sessions() {
        local sbx=${COMP_WORDS[0]/#\~/$HOME}
        [[ $sbx == */* && -x $sbx ]] || sbx=sbx
        "$sbx" list --json 2>/dev/null </dev/null | tr ',{}[]' '\n\n\n\n\n' |
                sed -nE 's/^"(id|name)":"([^"]*)"$/\2/p'
}

# Add the words on stdin (one a line) that start with $cur to COMPREPLY. Called as
# `_sbx_reply < <(...)`: at the end of a pipe it would run in a subshell.
_sbx_reply() {
        local w
        while IFS= read -r w; do
                if [[ -n $w && $w == "$cur"* ]]; then
                        COMPREPLY+=("$w")
                fi
        done
        return 0
}

# The command to run in the session: the host's commands (the default base is the host's /usr).
_sbx_programs() {
        _sbx_reply < <(compgen -c -- "$cur" | grep '^[[:alnum:]]' | sort -u)
}

# The value of option $1: fixed choices, files, or nothing (free text).
_sbx_value() {
        case $1 in
        --net) _sbx_reply < <(compgen -W "none host proxy" -- "$cur") ;;
        --seccomp) _sbx_reply < <(compgen -W "default strict unconfined" -- "$cur") ;;
        --mode) _sbx_reply < <(compgen -W "files_with_matches content count" -- "$cur") ;;
        --memory | --cpus | --pids) _sbx_reply < <(compgen -W "unlimited" -- "$cur") ;;
        --rootfs)
                compopt -o filenames 2>/dev/null || true
                _sbx_reply < <({ compgen -W "host" -- "$cur"; compgen -d -- "$cur"; })
                ;;
        --mount)
                # the host path only: the sandbox path is not on this host
                [[ $cur == *:* ]] && return 0
                compopt -o filenames 2>/dev/null || true
                _sbx_reply < <(compgen -f -- "$cur")
                ;;
        --config | --old-file | --new-file)
                compopt -o filenames 2>/dev/null || true
                _sbx_reply < <(compgen -f -- "$cur")
                ;;
        esac
}

_sbx() {
        COMPREPLY=()
        # Put "--opt" "=" "value" and "H" ":" "S" (--mount, --allow-host) back together: '='
        # and ':' are in COMP_WORDBREAKS.
        local -a words=()
        local cword=0 i w
        for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
                w=${COMP_WORDS[i]}
                if ((i > 0)) && [[ $w == = && ${words[-1]} == --* && ${words[-1]} != *=* ]]; then
                        words[-1]+="="
                elif ((i > 0)) && [[ ${COMP_WORDS[i - 1]} == = && ${words[-1]} == --*= ]]; then
                        words[-1]+=$w
                elif ((i > 1)) && [[ $w == : || ${COMP_WORDS[i - 1]} == : ]]; then
                        words[-1]+=$w
                else
                        words+=("$w")
                fi
                ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
        done
        local cur=${words[cword]} prev=${words[cword - 1]:-}

        # --opt=value: complete the value only ('=' splits words, or it does not)
        if [[ $cur == --*=* ]]; then
                local opt=${cur%%=*}
                cur=${cur#*=}
                _sbx_value "$opt"
                if [[ ${COMP_WORDS[COMP_CWORD]} == --*=* ]]; then
                        COMPREPLY=("${COMPREPLY[@]/#/$opt=}")
                fi
                return 0
        fi

        # The command: the first word that is not a global option or its value.
        local cmd='' at=0
        for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                --config) i=$((i + 1)) ;;
                -*) ;;
                *)
                        cmd=${words[i]}
                        at=$i
                        break
                        ;;
                esac
        done
        if [[ -z $cmd ]]; then
                if [[ $prev == --config ]]; then
                        _sbx_value --config
                elif [[ $cur == -* ]]; then
                        _sbx_reply < <(compgen -W "--config --help --json --version" -- "$cur")
                else
                        _sbx_reply < <(compgen -W "$_sbx_commands" -- "$cur")
                fi
                return 0
        fi

        # Where are we? Options end at "--", and for commands parsed with getopt's "+"
        # (all but the file commands) at the first operand.
        local operands=0 opts_done=false anywhere=false
        case $cmd in
        ls | read | write | edit | glob | grep) anywhere=true ;;
        esac
        for ((i = at + 1; i < cword; i++)); do
                w=${words[i]}
                if ! $opts_done && [[ $w == -- ]]; then
                        opts_done=true
                elif ! $opts_done && [[ $w == -?* ]]; then
                        if [[ $w != *=* ]] && _sbx_takes_value "$w"; then
                                i=$((i + 1))
                        fi
                elif [[ $cmd == exec && $operands -eq 1 && $w == -- ]]; then
                        : # exec ID -- CMD
                else
                        operands=$((operands + 1))
                        $anywhere || opts_done=true
                fi
        done
        if ! $opts_done && [[ $prev == -?* ]] && _sbx_takes_value "$prev"; then
                _sbx_value "$prev"
                return 0
        fi
        if ! $opts_done && [[ $cur == -* ]]; then
                _sbx_reply < <(compgen -W "$(_sbx_flags "$cmd")" -- "$cur")
                return 0
        fi

        case $cmd in
        connect | log | ls | read | write | edit | glob | grep | pause | resume | stats | net | diff | cp | commit)
                ((operands == 0)) && _sbx_reply < <(_sbx_sessions)
                ;;
        ps | logs | wait | kill)
                if ((operands == 0)); then
                        _sbx_reply < <(_sbx_sessions)
                elif [[ $cmd == kill ]] && ((operands == 2)); then
                        _sbx_reply < <(compgen -W "TERM INT HUP KILL QUIT USR1 USR2 STOP CONT" -- "$cur")
                fi
                ;;
        fs)
                if ((operands == 0)); then
                        _sbx_reply < <(_sbx_sessions)
                elif ((operands == 1)); then
                        _sbx_reply < <(compgen -W "chmod get info list mkdir mv put replace rm rmdir search" -- "$cur")
                fi
                ;;
        destroy) _sbx_reply < <(_sbx_sessions) ;;
        exec)
                if ((operands == 0)); then
                        _sbx_reply < <(_sbx_sessions)
                elif ((operands == 1)); then
                        _sbx_programs
                fi
                ;;
        run) ((operands == 0)) && _sbx_programs ;;
        help) ((operands == 0)) && _sbx_reply < <(compgen -W "$_sbx_commands" -- "$cur") ;;
        image)
                if ((operands == 0)); then
                        _sbx_reply < <(compgen -W "import list pull rm" -- "$cur")
                elif ((operands == 2)); then
                        _sbx_reply < <(compgen -f -- "$cur")
                fi
                ;;
        create | list | check | tools | mcp | serve)
                _sbx_reply < <(compgen -W "$(_sbx_flags "$cmd")" -- "$cur")
                ;;
        esac
        return 0
}

complete -F _sbx sbx
