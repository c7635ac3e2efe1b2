# fish completion for sbx(1).
#
# The commands and flags are those of the command table (src/cli/commands.c);
# tests/500-docs.bats checks that they agree with `sbx help`, with the bash and zsh
# completions and with sbx(1).

# The words after "sbx" before the cursor, without the global options (--json, --config
# FILE): the command first, then its arguments. Nothing while the command is not typed.
function __sbx_args
    set -l tokens (commandline -opc)
    set -e tokens[1]
    while set -q tokens[1]
        switch $tokens[1]
            case --config
                set -e tokens[1]
            case '-*'
            case '*'
                printf '%s\n' $tokens
                return 0
        end
        set -e tokens[1]
    end
    return 1
end

function __sbx_needs_command
    not __sbx_args >/dev/null
end

# Is the command one of $argv?
function __sbx_using
    set -l args (__sbx_args)
    or return 1
    contains -- $args[1] $argv
end

# The number of operands given to the command so far (options and their values skipped;
# options end at "--", and at the first operand for all but the file commands).
function __sbx_operands
    set -l args (__sbx_args)
    or return 1
    set -l cmd $args[1]
    set -e args[1]
    set -l n 0
    set -l skip 0
    set -l done 0
    for a in $args
        if test $skip -eq 1
            set skip 0
            continue
        end
        if test $done -eq 0
            switch $a
                case --
                    set done 1
                    continue
                case '--*=*'
                    continue
                case --after-context --allow-host --before-context --config --context \
                    --cpus --disk --env --env-file --glob --hostname --image --limit --max-output \
                    --memory --mode --mount --name --net --new-file --nofile --offset \
                    --old-file --package --path --pids --ptys --rootfs --seccomp --timeout --ttl \
                    --workdir -A -B -C -e -t -w
                    set skip 1
                    continue
                case '-?*'
                    continue
            end
        end
        # exec ID -- CMD: the "--" after the id is not an operand
        if test $cmd = exec -a $n -eq 1 -a "$a" = --
            continue
        end
        set n (math $n + 1)
        contains -- $cmd ls read write edit glob grep; or set done 1
    end
    echo $n
end

# Does the command take a session at this position?
function __sbx_wants_session
    set -l args (__sbx_args)
    or return 1
    switch $args[1]
        case destroy
            return 0
        case connect exec log ls read write edit glob grep pause resume stats net diff cp ps logs wait kill commit fs
            test (__sbx_operands) -eq 0
        case '*'
            return 1
    end
end

# Does the command take the command to run at this position?
function __sbx_wants_program
    __sbx_using exec; and test (__sbx_operands) -eq 1; and return 0
    __sbx_using run; and test (__sbx_operands) -eq 0
end

# The ids and names of the caller's live sessions, from `sbx list --json` (no jq needed).
function __sbx_sessions
    set -l sbx (commandline -opc)[1]
    string match -q -- '*/*' $sbx; or set sbx sbx
    command -q -- $sbx; or return 0
    $sbx list --json 2>/dev/null </dev/null | string split ',' |
        string replace -a -r '[{}\[\]]' '' | string replace -r -f '^"(id|name)":"([^"]*)"$' '$2'
end

complete -c sbx -f

# global options and the commands
complete -c sbx -n __sbx_needs_command -l json -d 'print one JSON document on stdout'
complete -c sbx -n __sbx_needs_command -l config -r -F -d 'read this sandbox.ini on top'
complete -c sbx -n __sbx_needs_command -s h -l help -d 'show help'
complete -c sbx -n __sbx_needs_command -l version -d 'print the version and features'
complete -c sbx -n __sbx_needs_command -a create -d 'make a session, print its id'
complete -c sbx -n __sbx_needs_command -a connect -d 'check a session is alive and renew its TTL'
complete -c sbx -n __sbx_needs_command -a exec -d 'run a command inside a session'
complete -c sbx -n __sbx_needs_command -a destroy -d 'end sessions'
complete -c sbx -n __sbx_needs_command -a ls -d 'list a directory inside a session'
complete -c sbx -n __sbx_needs_command -a read -d 'print a file of a session with line numbers'
complete -c sbx -n __sbx_needs_command -a write -d 'create a new file (fails if it exists)'
complete -c sbx -n __sbx_needs_command -a edit -d 'replace an exact string in a file'
complete -c sbx -n __sbx_needs_command -a glob -d 'find files by name pattern, newest first'
complete -c sbx -n __sbx_needs_command -a grep -d 'search file contents (PCRE)'
complete -c sbx -n __sbx_needs_command -a run -d 'create, exec, destroy in one call'
complete -c sbx -n __sbx_needs_command -a list -d "the caller's sessions"
complete -c sbx -n __sbx_needs_command -a log -d "print a session's audit log (JSON Lines)"
complete -c sbx -n __sbx_needs_command -a image -d 'import, pull, list and remove images (bases for --image)'
complete -c sbx -n __sbx_needs_command -a check -d 'what this host supports, and what is missing'
complete -c sbx -n __sbx_needs_command -a help -d 'show help for sbx or one command'
complete -c sbx -n __sbx_needs_command -a tools -d 'the tool definitions for a model'
complete -c sbx -n __sbx_needs_command -a mcp -d 'serve the tools over MCP on stdio'
complete -c sbx -n __sbx_needs_command -a serve -d 'serve the OpenSandbox HTTP API'
complete -c sbx -n __sbx_needs_command -a cp -d 'copy files or directories into or out of a session'
complete -c sbx -n __sbx_needs_command -a fs -d 'file operations of the execd API'
complete -c sbx -n __sbx_needs_command -a diff -d 'what a session changed against its base'
complete -c sbx -n __sbx_needs_command -a net -d 'change a live session\'s allow list'
complete -c sbx -n __sbx_needs_command -a stats -d 'cpu, memory, pids, disk and network use'
complete -c sbx -n __sbx_needs_command -a resume -d 'thaw a paused session'
complete -c sbx -n __sbx_needs_command -a pause -d 'freeze every process of a session'
complete -c sbx -n __sbx_needs_command -a ps -d 'a session\'s detached commands'
complete -c sbx -n __sbx_needs_command -a logs -d 'a detached command\'s output from a byte cursor'
complete -c sbx -n __sbx_needs_command -a wait -d 'wait for a detached command, exit with its code'
complete -c sbx -n __sbx_needs_command -a kill -d 'signal a detached command\'s process group'
complete -c sbx -n __sbx_needs_command -a commit -d "a session's writable layer as a new image"

# sessions, commands to run, help topics
complete -c sbx -n __sbx_wants_session -a '(__sbx_sessions)' -d session
complete -c sbx -n __sbx_wants_program -a '(__fish_complete_command)'
complete -c sbx -n '__sbx_using help; and test (__sbx_operands) -eq 0' \
    -a 'create connect exec destroy ls read write edit glob grep run list log image check help tools mcp pause resume stats net diff cp ps logs wait kill commit fs serve'

# options of every command
set -l all create connect exec destroy ls read write edit glob grep run list log image check help tools mcp pause resume stats net diff cp ps logs wait kill commit fs serve
complete -c sbx -n "__sbx_using $all" -l json -d 'print one JSON document on stdout'
complete -c sbx -n "__sbx_using $all" -l config -r -F -d 'read this sandbox.ini on top'
complete -c sbx -n "__sbx_using $all" -s h -l help -d 'show help'

# image
complete -c sbx -n '__sbx_using image; and test (__sbx_operands) -eq 0' -a 'import list pull rm'
complete -c sbx -n '__sbx_using image' -l insecure-registry -d 'allow plain HTTP to the registry (image pull)'
complete -c sbx -n '__sbx_using create run image' -l progress -x -a 'auto none json' -d 'progress: a line on a terminal, none, or JSON lines'
complete -c sbx -n '__sbx_using image; and test (__sbx_operands) -eq 2' -F

# create (and run)
complete -c sbx -n '__sbx_using create run' -l name -x -d 'a name for the session'
complete -c sbx -n '__sbx_using create run' -l ttl -x -d 'session lifetime; 0 = until destroyed'
complete -c sbx -n '__sbx_using create' -l timeout -x -d 'default per-command timeout'
complete -c sbx -n '__sbx_using create run' -l rootfs -x -a '(__fish_complete_directories) host' \
    -d 'read-only base: host or a root filesystem dir'
complete -c sbx -n '__sbx_using create run' -l image -x -d 'base from an imported image'
complete -c sbx -n '__sbx_using create run' -l package -x -d 'pip package to install at create'
complete -c sbx -n '__sbx_using create run' -l read-only -d 'base stays read-only'
complete -c sbx -n '__sbx_using create run' -l strict-limits \
    -d 'fail when a default limit cannot be enforced'
complete -c sbx -n '__sbx_using create' -l workdir -x -d 'start directory of commands'
complete -c sbx -n '__sbx_using create run' -l hostname -x -d 'hostname inside'
complete -c sbx -n '__sbx_using create' -l env -x -d 'environment of every command (K=V)'
complete -c sbx -n '__sbx_using create run' -l env-file -r -F -d 'environment from a file (K=V lines or JSON; - for stdin)'
complete -c sbx -n '__sbx_using create run' -l mount -r -F -d 'bind host path H at S (H:S[:ro])'
complete -c sbx -n '__sbx_using create run' -l memory -x -a unlimited -d 'memory limit, no swap'
complete -c sbx -n '__sbx_using create run' -l cpus -x -a unlimited -d 'CPU bandwidth, fractional'
complete -c sbx -n '__sbx_using create run' -l pids -x -a unlimited -d 'max tasks'
complete -c sbx -n '__sbx_using create run' -l disk -x -d 'size of the writable layer'
complete -c sbx -n '__sbx_using create run' -l nofile -x -d 'open files per process'
complete -c sbx -n '__sbx_using create run' -l ptys -x -d 'pseudo-terminals the session may hold'
complete -c sbx -n '__sbx_using create run' -l net -x -a 'none host proxy' -d 'network mode'
complete -c sbx -n '__sbx_using create run' -l allow-host -x -d 'allowed destination (proxy mode)'
complete -c sbx -n '__sbx_using create run' -l seccomp -x -a 'default strict unconfined' \
    -d 'seccomp profile'

# exec (and run)
complete -c sbx -n '__sbx_using exec run' -s t -l timeout -x -d 'kill the command after DUR'
complete -c sbx -n '__sbx_using exec run' -s w -l workdir -x -d 'working directory'
complete -c sbx -n '__sbx_using exec run' -s e -l env -x -d 'add to the environment (K=V)'
complete -c sbx -n '__sbx_using exec' -l env-file -r -F -d 'add to the environment from a file (- for stdin)'
complete -c sbx -n '__sbx_using exec run' -s i -l interactive -d 'forward stdin'
complete -c sbx -n '__sbx_using exec run' -s T -l tty -d 'run under a new pseudo-terminal inside'
complete -c sbx -n '__sbx_using exec run' -l max-output -x -d 'cap on captured output'
complete -c sbx -n '__sbx_using exec' -s d -l detach -d 'print a command id at once'
complete -c sbx -n '__sbx_using logs' -l cursor -x -d 'start at this byte of the output'
complete -c sbx -n '__sbx_using logs' -l follow -d 'keep printing until the command ends'
complete -c sbx -n '__sbx_using kill; and test (__sbx_operands) -eq 2' -x -a 'TERM INT HUP KILL QUIT USR1 USR2 STOP CONT'

# connect, destroy, list
complete -c sbx -n '__sbx_using connect' -l ttl -x -d 'new lifetime from now'
complete -c sbx -n '__sbx_using destroy' -l force -d 'no error for missing sessions'
complete -c sbx -n '__sbx_using mcp' -l any-session -d 'let the tools act on all your sessions'
complete -c sbx -n '__sbx_using mcp' -l destroy-on-close -d 'destroy the connection\'s sessions when it ends'
complete -c sbx -n '__sbx_using mcp' -l max-output -x -d 'text of one result a model reads'
complete -c sbx -n '__sbx_using serve' -l listen -r -d 'address to listen on (ADDR:PORT)'
complete -c sbx -n '__sbx_using serve' -l api-key-file -r -F -d 'the API key clients must send'
complete -c sbx -n '__sbx_using list' -s q -l quiet -d 'print only the ids'

# file commands
complete -c sbx -n '__sbx_using read' -l offset -x -d 'skip N lines'
complete -c sbx -n '__sbx_using read' -l limit -x -d 'print at most N lines'
complete -c sbx -n '__sbx_using read' -l binary -d 'print a non-text file as base64'
complete -c sbx -n '__sbx_using edit' -l replace-all -d 'replace every occurrence'
complete -c sbx -n '__sbx_using edit' -l old-file -r -F -d 'read OLD from a file (- = stdin)'
complete -c sbx -n '__sbx_using edit' -l new-file -r -F -d 'read NEW from a file (- = stdin)'
complete -c sbx -n '__sbx_using glob' -l path -x -d 'where to search'
complete -c sbx -n '__sbx_using grep' -l mode -x -a 'files_with_matches content count' \
    -d 'output mode'
complete -c sbx -n '__sbx_using grep' -s A -l after-context -x -d 'lines after each match'
complete -c sbx -n '__sbx_using grep' -s B -l before-context -x -d 'lines before each match'
complete -c sbx -n '__sbx_using grep' -s C -l context -x -d 'lines before and after'
complete -c sbx -n '__sbx_using grep' -s i -l ignore-case -d 'case-insensitive'
complete -c sbx -n '__sbx_using grep' -s F -l fixed-strings -d 'PATTERN is a literal string'
complete -c sbx -n '__sbx_using grep' -l glob -x -d 'only files whose name matches G'
complete -c sbx -n '__sbx_using stats' -l watch -d 'print a sample every second'
complete -c sbx -n '__sbx_using commit' -l pause -d 'freeze the session for the snapshot'
complete -c sbx -n '__sbx_using commit' -l replace -d 'move NAME:TAG when it names another image'
