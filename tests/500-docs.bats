#!/usr/bin/env bats
# Documentation and completions, checked against the one command table (src/cli/commands.c)
# and the one option table (src/config/keys.c) so that they cannot drift:
#  - sbx(1) and sandbox.ini(5) render without a single groff warning;
#  - the bash completion, driven through COMP_WORDS/COMP_CWORD, offers exactly the expected
#    words (commands, each command's flags, flag values, live session ids and names);
#  - the command table, `sbx help`, the bash, zsh and fish completions and sbx(1) name the
#    same commands, and for each command the same long flags; sbx(1) shows the table's
#    synopsis of each command; `sbx help COMMAND` has examples that use the command's flags;
#  - every key of the option table is in sandbox.ini(5) with the default that
#    sandbox.ini.example gives it, and every SBX_* variable is in sbx(1).
# That sandbox.ini.example yields exactly the built-in defaults is checked in C, where the
# config structure is visible: tests/unit/test_config.c (test_example); here sbx itself
# must accept the example and the one in sandbox.ini(5).

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

# ---- the sources -----------------------------------------------------------------------

man1=$SBX_SRC/man/sbx.1.scd
man5=$SBX_SRC/man/sandbox.ini.5.scd

# The commands of `sbx help`, one a line, in its order.
help_commands() {
        "$SBX" help | awk '/^Commands:$/ { on = 1; next }
                           on && /^  [a-z]/ { print $1 }
                           on && /^$/ { exit }'
}

# The command table, preprocessed (its option and flag lists are macros) and read by a small
# parser of C initialisers: one line per command, "name<TAB>synopsis<TAB>flags".
table_py=$(
        cat <<'EOF'
import re, sys
src = sys.stdin.read()
body = src[src.index("{", src.index("sbx_commands[] =")) + 1:]
rows, fields, cur, depth = [], [], None, 0
for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[{},;]|[A-Za-z_]\w*|\S', body):
    t = m.group(0)
    if depth == 0:
        if t == "{":
            depth, fields, cur = 1, [], None
        elif t in ("}", ";"):
            break
        continue
    if t == "}":
        fields.append(cur)
        rows.append(fields)
        depth = 0
    elif t == ",":
        fields.append(cur)
        cur = None
    elif t.startswith('"'):
        cur = (cur or "") + t[1:-1].encode().decode("unicode_escape")
    else:
        cur = t
for f in rows:
    if len(f) != 7:
        sys.exit("a row of sbx_commands without 7 fields: %r" % (f,))
    print("%s\t%s\t%s" % (f[0], f[2], f[6]))
EOF
)
table_rows() {
        "${CC:-cc}" -E -P -I"$SBX_SRC/src" "$SBX_SRC/src/cli/commands.c" | python3 -c "$table_py"
}

# table_field NAME N: field N (1 name, 2 synopsis, 3 flags) of the table row of NAME.
table_field() {
        awk -F '\t' -v c="$1" -v n="$2" '$1 == c { print $n }' <<<"$table"
}

# Long flags in stdin, sorted, one a line ("--" alone is not a flag).
flags_in() {
        grep -o -- '--[a-z][a-z-]*' | LC_ALL=C sort -u
}

# The long flags of `sbx help COMMAND` (its Options section).
help_flags() {
        "$SBX" help "$1" | sed -n '/^Options:$/,/^Examples:$/p' | flags_in
}

# The long flags of COMMAND that take a value ("--name NAME" in its help).
help_value_flags() {
        "$SBX" help "$1" | sed -n '/^Options:$/,/^Examples:$/p' |
                grep -oE -- '--[a-z][a-z-]* [A-Z]' | sed 's/ .*//' | LC_ALL=C sort -u
}

# The text of the "## sbx COMMAND ..." subsection of sbx(1), heading included.
man_section() {
        awk -v c="$1" '
                $0 == "## sbx " c || index($0, "## sbx " c " ") == 1 { on = 1; print; next }
                on && /^#/ { exit }
                on { print }' "$man1"
}

# The text of a "# SECTION" of a man page source.
man_chapter() {
        awk -v s="$2" '$0 == "# " s { on = 1; next } on && /^# / { exit } on { print }' "$1"
}

# scdoc source to plain words: no *bold*, _underline_ or backslash escapes.
unscd() {
        sed -e 's/\\\(.\)/\1/g' -e 's/\*//g' -e 's/++$//' -e 's/\(^\|[^[:alnum:]]\)_/\1/g' \
                -e 's/_\([^[:alnum:]]\|$\)/\1/g'
}

# ---- driving the completions -------------------------------------------------------------

# bash_complete WORD...: what the bash completion offers for the command line WORD... (the
# first word is the command, "$SBX"; the last is the one being completed), sorted, one a
# line. It runs in a fresh bash, as bash-completion would call it.
bash_complete() {
        bash --noprofile --norc -c '
                source "$1/completions/sbx.bash"
                shift
                COMP_WORDS=("$@")
                COMP_CWORD=$(($# - 1))
                COMP_LINE="$*"
                COMP_POINT=${#COMP_LINE}
                _sbx
                printf "%s\n" "${COMPREPLY[@]}"' bash "$SBX_SRC" "$@" | LC_ALL=C sort
}

# zsh_specs FUNCTION: the arguments a function of completions/_sbx passes to _arguments or
# _describe, one a line (both stubbed: this runs outside a completion widget).
zsh_specs() {
        zsh -f -c '
                _arguments() { print -rl -- "$@" }
                _describe() { print -rl -- ${(P)${@[-1]}} }
                _wanted() { shift 3; "$@" }
                compadd() { [[ $1 == -a ]] && shift; local a; for a; do print -rl -- ${(P)a}; done }
                _call_program() { shift; eval "$*" }
                words=(sbx) CURRENT=2
                source "$1" >/dev/null
                _sbx_bin=$2 "$3"' zsh "$SBX_SRC/completions/_sbx" "$SBX" "$1"
}

# The long flags in _arguments specs: '(-t --timeout)--timeout[...]:...' -> --timeout.
zsh_spec_flags() {
        sed -e 's/^([^)]*)//' -e 's/^\*//' | grep -oE -- '^--[a-z][a-z-]*' | LC_ALL=C sort -u
}

# fish_complete LINE: fish's candidates for LINE, sorted, one a line.
fish_complete() {
        fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
                "$SBX_SRC/completions/sbx.fish" "$1" | cut -f1 | LC_ALL=C sort -u
}

# same_set WHAT EXPECTED ACTUAL: two newline-separated lists are equal as sets.
same_set() {
        local want got
        want=$(LC_ALL=C sort -u <<<"$2" | sed '/^$/d')
        got=$(LC_ALL=C sort -u <<<"$3" | sed '/^$/d')
        [ "$want" = "$got" ] && return 0
        echo "$1 differ:" >&2
        echo "  missing: $(comm -23 <(echo "$want") <(echo "$got") | xargs)" >&2
        echo "  extra:   $(comm -13 <(echo "$want") <(echo "$got") | xargs)" >&2
        return 1
}

# The long flags of COMMAND in the table, one a line.
table_flags() {
        table_field "$1" 3 | tr ' ' '\n' | flags_in
}

load_table() {
        command -v python3 >/dev/null || fail "python3 is needed to read the command table"
        table=$(table_rows) || fail "cannot read the command table of src/cli/commands.c"
        [ "$(wc -l <<<"$table")" -ge 10 ] || fail "the command table looks too short:" "$table"
}

# ---- man pages ---------------------------------------------------------------------------

# The built page, or one rendered now when the build dir has none (configured before
# man/meson.build existed).
built_page() {
        local page=$1
        if [ -f "$SBX_BUILD/man/$page" ]; then
                echo "$SBX_BUILD/man/$page"
                return
        fi
        command -v scdoc >/dev/null || return 1
        scdoc <"$SBX_SRC/man/$page.scd" >"$BATS_TEST_TMPDIR/$page" || return 1
        echo "$BATS_TEST_TMPDIR/$page"
}

@test "sbx(1) and sandbox.ini(5) render with man and groff without any warning" {
        command -v scdoc >/dev/null || [ -d "$SBX_BUILD/man" ] ||
                skip "no scdoc and no built man pages (scripts/bootstrap installs scdoc)"
        command -v man >/dev/null && command -v groff >/dev/null ||
                fail "man and groff are needed to check the pages (Debian: man-db, groff-base)"
        local page f out
        for page in sbx.1 sandbox.ini.5; do
                f=$(built_page "$page") || fail "cannot build $page from $page.scd"
                [ -s "$f" ] || fail "$f is empty"
                out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null) ||
                        fail "man -l $f failed: $out"
                [ -z "$out" ] || fail "man --warnings -l $f:" "$out"
                out=$(groff -ww -z -t -man -Tutf8 "$f" 2>&1) || fail "groff failed on $f: $out"
                [ -z "$out" ] || fail "groff -ww -man $f:" "$out"
                LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q '^NAME' ||
                        fail "man -l $f shows no NAME section"
        done
}

# ---- bash completion ---------------------------------------------------------------------

@test "bash: 'sbx <TAB>' offers exactly the commands of sbx help" {
        local want
        want=$(help_commands)
        [ -n "$want" ] || fail "no commands in sbx help"
        same_set "commands (sbx help vs bash completion)" "$want" "$(bash_complete "$SBX" '')"
        [ "$(bash_complete "$SBX" ex)" = exec ] || fail "'sbx ex' does not complete to exec"
        [ "$(bash_complete "$SBX" --json gr)" = grep ] || fail "'sbx --json gr' is not grep"
        same_set "commands after 'sbx help'" "$want" "$(bash_complete "$SBX" help '')"
        same_set "global options" "$(printf '%s\n' --config --help --json --version)" \
                "$(bash_complete "$SBX" -)"
}

@test "bash: 'sbx exec --<TAB>' offers exactly exec's flags" {
        same_set "exec flags (sbx help exec vs bash completion)" "$(help_flags exec)" \
                "$(bash_complete "$SBX" exec --)"
        [ "$(bash_complete "$SBX" exec --max)" = --max-output ] ||
                fail "'sbx exec --max' does not complete to --max-output"
        # options end at the session id (getopt's "+"), and at "--"
        sbx_ok create --name work
        [ -z "$(bash_complete "$SBX" exec work --)" ] || fail "flags offered after the id"
        [ -z "$(bash_complete "$SBX" run -- --)" ] || fail "flags offered after --"
        # file commands take options anywhere
        same_set "read flags after the operands" "$(help_flags read)" \
                "$(bash_complete "$SBX" read work notes.md --)"
}

@test "bash: flag values (--net, --seccomp, --mode, --rootfs, --opt=value)" {
        [ "$(bash_complete "$SBX" create --net '' | xargs)" = "host none proxy" ] ||
                fail "'sbx create --net ' offers: $(bash_complete "$SBX" create --net '' | xargs)"
        [ "$(bash_complete "$SBX" run --net '' | xargs)" = "host none proxy" ] ||
                fail "'sbx run --net ' offers the wrong modes"
        [ "$(bash_complete "$SBX" create --net h)" = host ] || fail "'--net h' is not host"
        [ "$(bash_complete "$SBX" create --seccomp '' | xargs)" = "default strict unconfined" ] ||
                fail "'--seccomp ' offers: $(bash_complete "$SBX" create --seccomp '' | xargs)"
        [ "$(bash_complete "$SBX" grep --mode '' | xargs)" = "content count files_with_matches" ] ||
                fail "'grep --mode ' offers: $(bash_complete "$SBX" grep --mode '' | xargs)"
        # "--net=h": '=' splits words in bash (COMP_WORDBREAKS), so the word is "h" after "="
        [ "$(bash_complete "$SBX" create --net = h)" = host ] || fail "'--net=h' is not host"
        [ "$(bash_complete "$SBX" create --net = | xargs)" = "host none proxy" ] ||
                fail "'--net=' offers the wrong modes"
        # --rootfs: host or a directory; --config and --mount: files
        mkdir -p "$BATS_TEST_TMPDIR/cwd/rootdir"
        touch "$BATS_TEST_TMPDIR/cwd/conf.ini"
        cd "$BATS_TEST_TMPDIR/cwd"
        [ "$(bash_complete "$SBX" create --rootfs '' | xargs)" = "host rootdir" ] ||
                fail "'--rootfs ' offers: $(bash_complete "$SBX" create --rootfs '' | xargs)"
        [ "$(bash_complete "$SBX" create --config co)" = conf.ini ] || fail "--config: no file"
        [ "$(bash_complete "$SBX" --config co)" = conf.ini ] || fail "sbx --config: no file"
        [ "$(bash_complete "$SBX" create --mount roo)" = rootdir ] || fail "--mount: no dir"
}

@test "bash: commands that take an ID offer the live sessions' ids and names" {
        new_session --name work
        local want a b c
        want=$(printf '%s\n' "$sid" work)
        for c in connect exec destroy ls read write edit glob grep; do
                same_set "candidates of 'sbx $c '" "$want" "$(bash_complete "$SBX" "$c" '')"
        done
        same_set "after a global option" "$want" "$(bash_complete "$SBX" --json exec '')"
        same_set "after an exec option" "$want" "$(bash_complete "$SBX" exec -t 10s --tty '')"
        [ "$(bash_complete "$SBX" exec sb_)" = "$sid" ] || fail "'sbx exec sb_' is not the id"
        [ "$(bash_complete "$SBX" exec w)" = work ] || fail "'sbx exec w' is not the name"
        same_set "destroy's second ID" "$want" "$(bash_complete "$SBX" destroy work '')"
        # only the first operand is a session
        [ -z "$(bash_complete "$SBX" read work '')" ] || fail "a session offered as PATH"
        # a second session, and one that is gone
        sbx_ok create
        b=$output
        same_set "two sessions" "$(printf '%s\n' "$sid" work "$b")" \
                "$(bash_complete "$SBX" exec '')"
        sbx_ok destroy "$b"
        same_set "after destroy" "$want" "$(bash_complete "$SBX" exec '')"
        # no sessions: nothing, and no error text among the candidates
        sbx_ok destroy work
        a=$(bash_complete "$SBX" exec '')
        [ -z "$a" ] || fail "candidates without sessions: $a"
}

# After a flag that takes a value, its value (never flags or ids); after one that does not,
# the same as without it. This catches a flag missing from _sbx_takes_value.
@test "bash: after each flag of each command, a value or what comes without the flag" {
        new_session --name work
        local c f base got flags
        for c in $(help_commands); do
                flags=$(help_flags "$c")
                base=$(bash_complete "$SBX" "$c" '')
                for f in $flags; do
                        got=$(bash_complete "$SBX" "$c" "$f" '')
                        if grep -qxF -- "$f" <<<"$(help_value_flags "$c")"; then
                                ! grep -qxF -f <(printf '%s\n' "$flags" "$sid" work) <<<"$got" ||
                                        fail "'sbx $c $f ' offers flags or sessions, not a value:" \
                                                "$got"
                        else
                                [ "$got" = "$base" ] ||
                                        fail "'sbx $c $f ' differs from 'sbx $c '" \
                                                "($f takes no value)"
                        fi
                done
        done
}

# ---- one table, every place --------------------------------------------------------------

@test "the command table, sbx help, the bash completion and sbx(1) agree on commands and flags" {
        load_table
        local cmds c syn usage heading
        cmds=$(help_commands)
        same_set "commands (command table vs sbx help)" "$(cut -f1 <<<"$table")" "$cmds"
        same_set "commands (sbx help vs sbx(1) '## sbx COMMAND' sections)" "$cmds" \
                "$(sed -n 's/^## sbx \([a-z]*\).*/\1/p' "$man1")"
        for c in $cmds; do
                syn=$(table_field "$c" 2)
                # the synopsis: table = sbx help = sbx(1) section heading = SYNOPSIS line
                usage=$("$SBX" help "$c" | sed -n '1s/^Usage: //p' | sed 's/ *$//')
                [ "$usage" = "$(echo "sbx $c $syn" | sed 's/ *$//')" ] ||
                        fail "sbx help $c shows '$usage', the table 'sbx $c $syn'"
                heading=$(man_section "$c" | head -n 1)
                [ "$heading" = "## $usage" ] ||
                        fail "sbx(1): the section of $c is '$heading', expected '## $usage'"
                man_chapter "$man1" SYNOPSIS | unscd | grep -qxF -- "$usage" ||
                        fail "sbx(1) SYNOPSIS has no line '$usage'"
                # the flags: table = sbx help = sbx COMMAND --help = bash = sbx(1) section
                same_set "flags of $c (command table vs sbx help $c)" \
                        "$(table_flags "$c")" "$(help_flags "$c")"
                if [ "$c" != help ]; then # `sbx help --help` is the overview
                        same_set "flags of $c (sbx help $c vs sbx $c --help)" \
                                "$(help_flags "$c")" \
                                "$("$SBX" "$c" --help | sed -n '/^Options:$/,/^Examples:$/p' |
                                        flags_in)"
                fi
                same_set "flags of $c (command table vs bash 'sbx $c --')" \
                        "$(table_flags "$c")" "$(bash_complete "$SBX" "$c" --)"
                # every flag has an entry (a line "*--flag* ...", or the common options
                # line), and the section mentions no other flag
                same_set "flags of $c (command table vs sbx(1) section entries)" \
                        "$(table_flags "$c")" \
                        "$(man_section "$c" | grep -E '^(\*-|Common options:)' | flags_in)"
                same_set "flags of $c (command table vs all of its sbx(1) section)" \
                        "$(table_flags "$c")" "$(man_section "$c" | sed 1d | flags_in)"
        done
}

@test "the zsh completion agrees with the command table" {
        command -v zsh >/dev/null || skip "zsh is not installed"
        zsh -n "$SBX_SRC/completions/_sbx" || fail "completions/_sbx: syntax error"
        load_table
        local c
        same_set "commands (command table vs zsh _sbx_commands)" "$(cut -f1 <<<"$table")" \
                "$(zsh_specs _sbx_commands | sed 's/:.*//')"
        for c in $(help_commands); do
                same_set "flags of $c (command table vs zsh _sbx_cmd_$c)" "$(table_flags "$c")" \
                        "$(zsh_specs "_sbx_cmd_$c" | zsh_spec_flags)"
        done
        grep -q -- "--net\[[^]]*\]:mode:(none host proxy)" "$SBX_SRC/completions/_sbx" ||
                fail "zsh: --net does not offer none host proxy"
        new_session --name work
        same_set "zsh session candidates" "$(printf '%s\n' "$sid" work)" \
                "$(zsh_specs _sbx_sessions)"
}

@test "the fish completion agrees with the command table" {
        command -v fish >/dev/null || skip "fish is not installed"
        fish --no-execute "$SBX_SRC/completions/sbx.fish" ||
                fail "completions/sbx.fish: syntax error"
        load_table
        local c
        same_set "commands (command table vs fish 'sbx ')" "$(cut -f1 <<<"$table")" \
                "$(fish_complete 'sbx ')"
        for c in $(help_commands); do
                same_set "flags of $c (command table vs fish 'sbx $c --')" "$(table_flags "$c")" \
                        "$(fish_complete "sbx $c --")"
        done
        [ "$(fish_complete 'sbx create --net ' | xargs)" = "host none proxy" ] ||
                fail "fish: --net offers: $(fish_complete 'sbx create --net ' | xargs)"
        new_session --name work
        local dir=$BATS_TEST_TMPDIR/bin
        mkdir -p "$dir"
        ln -s "$SBX" "$dir/sbx"
        same_set "fish session candidates" "$(printf '%s\n' "$sid" work)" \
                "$(PATH=$dir:$PATH fish_complete 'sbx exec ')"
}

@test "sbx help COMMAND shows examples that use the command and only its flags" {
        local c ex flags
        for c in $(help_commands); do
                ex=$("$SBX" help "$c" | sed -n '/^Examples:$/,$p' | sed 1d)
                [ -n "$ex" ] || fail "sbx help $c has no examples"
                grep -qE "(^|[ (])sbx $c( |$)" <<<"$ex" ||
                        fail "sbx help $c: no example runs 'sbx $c'"
                # the flags before a "--", outside quotes and $(...)
                flags=$(sed -e 's/ -- .*//' -e "s/'[^']*'//g" -e 's/\$([^)]*)//g' <<<"$ex" |
                        flags_in)
                [ -z "$(comm -23 <(echo "$flags" | sed '/^$/d') <(help_flags "$c"))" ] ||
                        fail "sbx help $c: examples use flags $c does not have:" \
                                "$(comm -23 <(echo "$flags" | sed '/^$/d') <(help_flags "$c"))"
        done
}

# ---- the option table --------------------------------------------------------------------

# The option table of src/config/keys.c, one key a line: "section key env flag" ("-" for NULL).
option_table() {
        perl -0777 -ne '
                my $s = qr/\s*(NULL|"[^"]*")\s*/;
                while (/\[KEY_\w+\]\s*=\s*\{\s*KEY_\w+\s*,$s,$s,$s,$s/g) {
                        my @f = ($1, $2, $3, $4);
                        s/^NULL$/-/, s/"//g for @f;
                        print "@f\n";
                }' "$SBX_SRC/src/config/keys.c"
}

# The "#key = value" settings of sandbox.ini.example: "section<TAB>key<TAB>value" (the value may
# be empty).
example_defaults() {
        awk '/^\[[a-z]+\]$/ { s = substr($0, 2, length($0) - 2) }
             /^#[a-z_]+ =/ {
                     v = $0
                     sub(/^[^=]*= ?/, "", v)
                     print s "\t" substr($1, 2) "\t" v
             }' \
                "$SBX_SRC/sandbox.ini.example"
}

# The entry of KEY in "## [SECTION]" of sandbox.ini(5), unescaped: from its "*key* =" line
# to the next key or section.
man5_entry() {
        unscd <"$man5" | awk -v s="[$1]" -v k="$2" '
                $0 == "## " s { in_s = 1; next }
                /^#/ { in_s = 0 }
                in_s && index($0, k " =") == 1 { on = 1; print; next }
                on && /^[a-z_]+ =/ { exit }
                on && /^#/ { exit }
                on { print }'
}

@test "every key of the option table is in sandbox.ini(5), every SBX_* variable in sbx(1)" {
        local rows section key env flag entry def want n
        rows=$(option_table)
        n=$(grep -c '^ *\[KEY_[A-Z_]*\] *=' "$SBX_SRC/src/config/keys.c")
        [ "$(wc -l <<<"$rows")" -eq "$n" ] && [ "$n" -ge 20 ] ||
                fail "read $(wc -l <<<"$rows") of $n keys from src/config/keys.c:" "$rows"
        local env1 env5 envall
        env1=$(man_chapter "$man1" ENVIRONMENT | unscd)
        while read -r section key env flag; do
                if [ "$env" != - ]; then
                        grep -qx -- "$env" <<<"$env1" || fail "sbx(1) ENVIRONMENT lacks $env"
                fi
                [ "$section" != - ] || continue
                entry=$(man5_entry "$section" "$key")
                [ -n "$entry" ] || fail "sandbox.ini(5) has no entry for [$section] $key"
                if [ "$env" != - ]; then
                        grep -qF -- "Variable: $env." <<<"$entry" ||
                                fail "sandbox.ini(5) [$section] $key does not name $env"
                fi
                if [ "$flag" != - ]; then
                        grep -qF -- "Flag: $flag" <<<"$entry" ||
                                fail "sandbox.ini(5) [$section] $key does not name $flag"
                else
                        grep -qF -- "No flag." <<<"$entry" ||
                                fail "sandbox.ini(5) [$section] $key: say 'No flag.'"
                fi
                def=$(grep -o 'Default: [^.]*\(\.[0-9][^.]*\)*\.' <<<"$entry" | head -n 1 |
                        sed -e 's/^Default: //' -e 's/\.$//')
                [ "$def" = empty ] && def=
                want=$(example_defaults | awk -F '\t' -v s="$section" -v k="$key" \
                        '$1 == s && $2 == k { print $3; f = 1 } END { exit !f }') ||
                        fail "sandbox.ini.example has no '#$key = ...' in [$section]"
                [ "$def" = "$want" ] ||
                        fail "[$section] $key: the default is '$def' in sandbox.ini(5)," \
                                "'$want' in sandbox.ini.example"
        done <<<"$rows"
        # and nothing documented that does not exist
        envall=$(awk '$3 != "-" { print $3 }' <<<"$rows"; printf '%s\n' SBX_CONFIG SBX_RUNTIME_DIR SBX_IMAGE_STORE SBX_IMAGE_MAX_SIZE SBX_SERVE_API_KEY)
        for f in "$man1" "$man5"; do
                env5=$(unscd <"$f" | grep -oE 'SBX_[A-Z_]*[A-Z]' | sort -u)
                [ -z "$(comm -23 <(echo "$env5") <(sort -u <<<"$envall"))" ] ||
                        fail "${f##*/} names variables sbx does not read:" \
                                "$(comm -23 <(echo "$env5") <(sort -u <<<"$envall"))"
        done
        same_set "the keys of sandbox.ini(5) (option table vs man page)" \
                "$(awk '$1 != "-" { print $2 }' <<<"$rows")" \
                "$(man_chapter "$man5" "SECTIONS AND KEYS" | unscd |
                        sed -n 's/^\([a-z_]*\) = .*/\1/p')"
        same_set "the sections of sandbox.ini(5) (option table vs man page)" \
                "$(awk '$1 != "-" { print $1 }' <<<"$rows"; echo env)" \
                "$(sed -n 's/^## \[\([a-z]*\)\]$/\1/p' "$man5")"
}

@test "sbx(1) documents every JSON error code that sbx can print" {
        local codes c json
        codes=$(cat "$SBX_SRC"/src/*/*.c "$SBX_SRC"/src/*/*.h | perl -0777 -ne '
                print "$1\n" while /sbx_fail\(\s*[^,]+,\s*[^,]+,\s*"([a-z_]+)"/g')
        [ -n "$codes" ] || fail "no sbx_fail(..., \"code\", ...) found in src/"
        json=$(man_chapter "$man1" "JSON OUTPUT" | unscd)
        for c in $(sort -u <<<"$codes"); do
                grep -qw -- "$c" <<<"$json" || fail "sbx(1) JSON OUTPUT does not list the code '$c'"
        done
}

@test "sbx accepts sandbox.ini.example with every setting on, and the example of sandbox.ini(5)" {
        sed 's/^#\([a-z_]* =\)/\1/' "$SBX_SRC/sandbox.ini.example" >"$BATS_TEST_TMPDIR/all.ini"
        grep -q '^memory = 512M$' "$BATS_TEST_TMPDIR/all.ini" ||
                fail "uncommenting the example failed"
        sbx_ok list --config "$BATS_TEST_TMPDIR/all.ini"
        man_chapter "$man5" EXAMPLE | sed -n '/^```$/,/^```$/p' | sed '1d;$d' \
                >"$BATS_TEST_TMPDIR/man.ini"
        grep -q '^\[sandbox\]' "$BATS_TEST_TMPDIR/man.ini" || fail "no example in sandbox.ini(5)"
        sbx_ok list --config "$BATS_TEST_TMPDIR/man.ini"
}
