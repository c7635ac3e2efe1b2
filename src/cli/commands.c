/* SPDX-License-Identifier: MIT */
/*
 * The one command table: dispatch, `sbx help`, `sbx COMMAND --help`, and the list that the
 * completions and the man page are checked against (tests/500-docs.bats).
 */
#include <string.h>

#include "cli.h"

/* The help texts are laid out as they print, a line of source per line of output. */
/* clang-format off */
#define GLOBAL_OPTIONS                                                                             \
        "      --json              print one JSON document on stdout (also on error)\n"            \
        "      --config FILE       read this sandbox.ini on top of the default ones\n"             \
        "  -h, --help              show this help\n"

#define CREATE_OPTIONS                                                                             \
        "      --name NAME         a name for the session ([a-z0-9][a-z0-9_.-]{0,62})\n"           \
        "      --ttl DUR           session lifetime, renewed by connect; 0 = until destroyed "     \
        "(30m)\n"                                                                                  \
        "      --timeout DUR       default per-command timeout (1800s)\n"                          \
        "      --rootfs DIR        read-only base: 'host' (default) or a root filesystem dir\n"     \
        "      --image NAME[:TAG]  base from an imported image\n"                                  \
        "      --package P         pip package to install at create (repeatable)\n"                 \
        "      --read-only         base stays read-only; only /workspace, /tmp, mounts writable\n" \
        "      --workdir DIR       start directory of commands (/workspace)\n"                     \
        "      --hostname NAME     hostname inside (sandbox)\n"                                    \
        "      --env K=V           environment of every command (repeatable)\n"                    \
        "      --env-file FILE     --env from a file: K=V lines or a JSON object ('-': stdin)\n"  \
        "      --mount H:S[:ro]    bind host path H at S (repeatable)\n"                           \
        "      --memory SIZE       memory limit, no swap (512M; 'unlimited': none)\n"             \
        "      --cpus N            CPU bandwidth, fractional (1; 'unlimited': none)\n"            \
        "      --pids N            max tasks (256; 'unlimited': none)\n"                          \
        "      --disk SIZE         size of the writable layer (1G)\n"                              \
        "      --nofile N          open files per process (1024)\n"                                \
        "      --ptys N            pseudo-terminals the session may hold (64)\n"                   \
        "      --net MODE          none (default), host, proxy\n"                                  \
        "      --allow-host H      allowed destination for proxy mode (repeatable)\n"              \
        "      --seccomp P         default, strict, unconfined\n"                                  \
        "      --strict-limits     fail (exit 4) when a default limit cannot be enforced\n"       \
        PROGRESS_OPTION

#define PROGRESS_OPTION                                                                            \
        "      --progress MODE     auto (a line on a terminal), none, json (lines on stderr)\n"

#define CREATE_FLAGS                                                                               \
        "--name --ttl --timeout --rootfs --image --package --read-only --workdir --hostname "      \
        "--env --env-file --mount --memory --cpus --pids --disk --nofile --ptys --net --allow-host --seccomp "   \
        "--strict-limits"

#define EXEC_OPTIONS                                                                               \
        "  -t, --timeout DUR       kill the command and all it started after DUR: exit 124\n"      \
        "  -w, --workdir DIR       working directory (the session's)\n"                            \
        "  -e, --env K=V           add to the environment (repeatable)\n"                          \
        "      --env-file FILE     -e from a file: K=V lines or a JSON object ('-': stdin)\n"      \
        "  -i, --interactive       forward stdin (otherwise /dev/null)\n"                          \
        "  -T, --tty               run under a new pseudo-terminal inside the sandbox\n"           \
        "      --max-output SIZE   cap on captured output (1M with --json)\n"

const struct command sbx_commands[] = {
        {"create", cmd_create, "[OPTIONS]", "make a session, print its id",
         CREATE_OPTIONS GLOBAL_OPTIONS,
         "  id=$(sbx create --ttl 1h --name work)\n"
         "  sbx create --json --memory 1G --mount ~/src:/workspace/src:ro\n"
         "  sbx create --memory unlimited --cpus unlimited --pids unlimited  # no cgroups\n",
         CREATE_FLAGS " --progress --json --config --help"},
        {"connect", cmd_connect, "[--ttl DUR] ID", "check a session is alive and renew its TTL",
         "      --ttl DUR           new lifetime from now (the session's own by default)\n"
                 GLOBAL_OPTIONS,
         "  sbx connect work\n  sbx connect --ttl 2h --json sb_0123456789abcdef\n",
         "--ttl --json --config --help"},
        {"exec", cmd_exec, "[OPTIONS] ID [--] CMD [ARG...]", "run a command inside a session",
         EXEC_OPTIONS
         "  -d, --detach            print a command id at once (output kept: --max-output, 8M)\n"
         GLOBAL_OPTIONS,
         "  sbx exec work -- python3 -c 'print(1)'\n"
         "  sbx exec --json -t 10s work sh -c 'make test'\n"
         "  sbx exec -iT work bash\n"
         "  cmd=$(sbx exec -d work -- make test)\n",
         "--timeout --workdir --env --env-file --interactive --tty --max-output --detach --json "
         "--config --help"},
        {"destroy", cmd_destroy, "[--force] ID...", "end sessions",
         "      --force             no error for sessions that do not exist; kill an "
         "unresponsive supervisor\n" GLOBAL_OPTIONS,
         "  sbx destroy work\n  sbx destroy --force $(sbx list --quiet)\n",
         "--force --json --config --help"},
        {"ls", cmd_ls, "ID [PATH]", "list a directory inside a session", GLOBAL_OPTIONS,
         "  sbx ls work\n  sbx ls --json work /workspace/src\n", "--json --config --help"},
        {"read", cmd_read, "[--offset N] [--limit N] [--binary] ID PATH",
         "print a file of a session with line numbers",
         "      --offset N          skip N lines (0)\n"
         "      --limit N           print at most N lines (2000)\n"
         "      --binary            print a non-text file as base64\n" GLOBAL_OPTIONS,
         "  sbx read work main.py\n  sbx read --offset 2000 --limit 500 work big.log\n"
         "  sbx read --binary work logo.png | base64 -d > logo.png\n",
         "--offset --limit --binary --json --config --help"},
        {"write", cmd_write, "ID PATH [CONTENT|-]", "create a new file (fails if it exists)",
         GLOBAL_OPTIONS,
         "  sbx write work notes.md '# Notes'\n  sbx write work data.csv - < data.csv\n",
         "--json --config --help"},
        {"edit", cmd_edit, "[--replace-all] ID PATH OLD NEW",
         "replace an exact string in a file",
         "      --replace-all       replace every occurrence\n"
         "      --old-file F        read OLD from F (- = stdin)\n"
         "      --new-file F        read NEW from F (- = stdin)\n" GLOBAL_OPTIONS,
         "  sbx edit work main.py 'print(1)' 'print(2)'\n"
         "  sbx edit --replace-all work main.py old_name new_name\n"
         "  sbx edit --old-file old.txt --new-file new.txt work main.py\n",
         "--replace-all --old-file --new-file --json --config --help"},
        {"glob", cmd_glob, "[--path DIR] ID PATTERN", "find files by name pattern, newest first",
         "      --path DIR          where to search (the workdir)\n" GLOBAL_OPTIONS,
         "  sbx glob work '**/*.py'\n  sbx glob --path /etc work '*.conf'\n",
         "--path --json --config --help"},
        {"grep", cmd_grep, "[OPTIONS] ID PATTERN [PATH]", "search file contents (PCRE)",
         "      --mode M            files_with_matches (default), content, count\n"
         "  -A, --after-context N   lines after each match (content mode)\n"
         "  -B, --before-context N  lines before each match\n"
         "  -C, --context N         lines before and after\n"
         "  -i, --ignore-case       case-insensitive\n"
         "  -F, --fixed-strings     PATTERN is a literal string\n"
         "      --glob G            only files whose name matches G\n" GLOBAL_OPTIONS,
         "  sbx grep work 'def main'\n  sbx grep --mode content -C 2 work TODO src\n"
         "  sbx grep --json -i -F --glob '*.py' work 'import os'\n",
         "--mode --after-context --before-context --context --ignore-case --fixed-strings "
         "--glob --json --config --help"},
        {"run", cmd_run, "[CREATE-OPTIONS] [EXEC-OPTIONS] [--] CMD [ARG...]",
         "create, exec, destroy in one call", CREATE_OPTIONS EXEC_OPTIONS GLOBAL_OPTIONS,
         "  sbx run -- echo hello\n  sbx run --json --mount .:/workspace -- make test\n",
         CREATE_FLAGS " --workdir --interactive --tty --max-output --progress --json --config --help"},
        {"list", cmd_list, "", "the caller's sessions",
         "  -q, --quiet             print only the ids\n" GLOBAL_OPTIONS,
         "  sbx list\n  sbx list --quiet\n  sbx list --json\n", "--quiet --json --config --help"},
        {"log", cmd_log, "ID", "print a session's audit log (JSON Lines)", GLOBAL_OPTIONS,
         "  sbx log work\n  sbx log work | jq -c 'select(.event == \"exec\")'\n"
         "  sbx log --json sb_0123456789abcdef\n",
         "--json --config --help"},
        {"image", cmd_image,
         "import NAME[:TAG] SOURCE | pull [--insecure-registry] REF | list | rm NAME[:TAG]",
         "import, pull, list and remove images (bases for --image)",
         GLOBAL_OPTIONS "      --insecure-registry  plain HTTP to the registry (image pull)\n" PROGRESS_OPTION,
         "  sbx image pull python:3.12-slim                 # from docker.io\n"
         "  sbx image pull --insecure-registry 127.0.0.1:5000/team/tool:1\n"
         "  sbx image import python:3.12 ./python-oci        # an OCI layout directory\n"
         "  sbx image import busybox:1 busybox.oci.tar       # oci-archive, docker save, or a "
         "rootfs tarball\n"
         "  sbx image list --json\n"
         "  sbx image rm python:3.12\n",
         "--json --config --help --insecure-registry --progress"},
        {"pause", cmd_pause, "ID", "freeze every process of a session",
         GLOBAL_OPTIONS,
         "  sbx pause work\n  sbx pause --json work\n", "--json --config --help"},
        {"resume", cmd_resume, "ID", "thaw a paused session", GLOBAL_OPTIONS,
         "  sbx resume work\n", "--json --config --help"},
        {"stats", cmd_stats, "[--watch] ID",
         "cpu, memory, pids, disk and network use against the limits",
         "      --watch             print a sample every second until interrupted\n"
         GLOBAL_OPTIONS,
         "  sbx stats work\n  sbx stats --watch work\n  sbx stats --json work | jq .memory\n",
         "--watch --json --config --help"},
        {"cp", cmd_cp, "SRC DST", "copy files or directories into or out of a session",
         GLOBAL_OPTIONS,
         "  sbx cp ./src work:/workspace/src\n  sbx cp work:/workspace/out.csv .\n",
         "--json --config --help"},
        {"ps", cmd_ps, "ID", "a session's detached commands: id, state, exit code, start",
         GLOBAL_OPTIONS, "  sbx ps work\n  sbx ps --json work\n", "--json --config --help"},
        {"logs", cmd_logs, "[--cursor N] [--follow] ID CMD",
         "a detached command's combined output from a byte cursor",
         "      --cursor N          start at byte N of the command's output (0)\n"
         "      --follow            keep printing as the command writes, until it ends\n"
         GLOBAL_OPTIONS,
         "  sbx logs work c1\n  sbx logs --follow work c1\n  sbx logs --json --cursor 4096 work c1\n",
         "--cursor --follow --json --config --help"},
        {"wait", cmd_wait, "ID CMD", "wait for a detached command and exit with its code",
         GLOBAL_OPTIONS, "  sbx wait work c1 && echo passed\n", "--json --config --help"},
        {"kill", cmd_kill, "ID CMD [SIGNAL]",
         "signal a detached command's process group (TERM by default)", GLOBAL_OPTIONS,
         "  sbx kill work c1\n  sbx kill work c1 INT\n  sbx kill work c1 9\n",
         "--json --config --help"},
        {"fs", cmd_fs, "ID OP [ARG...]",
         "file operations of the execd API (info mkdir chmod rm rmdir mv replace search list get "
         "put)",
         GLOBAL_OPTIONS,
         "  sbx fs work info /workspace/a.txt\n"
         "  echo '{\"/workspace/out\":{\"mode\":755}}' | sbx fs work mkdir\n"
         "  sbx fs work search /workspace '*.py'\n  sbx fs work put /workspace/run.sh 755 < run.sh\n",
         "--json --config --help"},
        {"diff", cmd_diff, "ID", "what a session changed against its base (A, C, D lines)",
         GLOBAL_OPTIONS, "  sbx diff work\n  sbx diff --json work | jq -r '.[].path'\n",
         "--json --config --help"},
        {"commit", cmd_commit, "[--pause] [--replace] ID NAME[:TAG]",
         "a session's writable layer as a new image on its base",
         "      --pause             freeze the session for the snapshot, thaw it after\n"
         "      --replace           move NAME:TAG when it names another image already\n"
         GLOBAL_OPTIONS,
         "  sbx commit work tools:1\n  sbx commit --pause --json work tools:1\n",
         "--pause --replace --json --config --help"},
        {"net", cmd_net, "ID allow|deny HOST | show", "change a live session's allow list",
         GLOBAL_OPTIONS,
         "  sbx net work allow pypi.org\n  sbx net work deny '*.example.com'\n"
         "  sbx net --json work show\n",
         "--json --config --help"},
        {"check", cmd_check, "", "what this host supports, and what is missing", GLOBAL_OPTIONS,
         "  sbx check\n  sbx check --json\n", "--json --config --help"},
        {"help", cmd_help, "[COMMAND]", "show help for sbx or one command", GLOBAL_OPTIONS,
         "  sbx help exec\n", "--json --config --help"},
        {"tools", cmd_tools, "", "the tool definitions for a model (JSON Schema)", GLOBAL_OPTIONS,
         "  sbx tools\n  sbx tools --json | jq '.[].name'\n", "--json --config --help"},
        {"mcp", cmd_mcp, "[--any-session] [--destroy-on-close] [--max-output SIZE]",
         "serve the tools over the Model Context Protocol on stdio",
         "      --any-session       let the tools act on all your sessions, not only MCP's\n"
         "      --destroy-on-close  destroy the sessions made on a connection when it ends\n"
         "      --max-output SIZE   text of one result a model reads, head and tail (64K)\n"
         GLOBAL_OPTIONS,
         "  sbx mcp\n"
         "  claude mcp add sbx -- sbx mcp\n"
         "  sbx mcp --config ~/.config/sbx/agent.ini\n",
         "--any-session --destroy-on-close --max-output --json --config --help"},
        {"serve", cmd_serve, "[--listen ADDR:PORT] [--api-key-file FILE]",
         "serve the OpenSandbox lifecycle and execd HTTP API",
         "      --listen ADDR:PORT  address to listen on (127.0.0.1:8083)\n"
         "      --api-key-file FILE the API key clients must send (else SBX_SERVE_API_KEY)\n"
         GLOBAL_OPTIONS,
         "  SBX_SERVE_API_KEY=secret sbx serve\n"
         "  sbx serve --listen 0.0.0.0:8083 --api-key-file /etc/sbx/serve.key\n",
         "--listen --api-key-file --json --config --help"},
};
/* clang-format on */
const size_t sbx_n_commands = sizeof(sbx_commands) / sizeof(sbx_commands[0]);

const struct command *command_find(const char *name)
{
        for (size_t i = 0; i < sbx_n_commands; i++)
                if (strcmp(sbx_commands[i].name, name) == 0)
                        return &sbx_commands[i];
        return NULL;
}
