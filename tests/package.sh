#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian package and `meson install`, checked as a user would meet them (.ci/run runs this
# as root on a throwaway machine: it installs the package system-wide and removes it again).
#
#   bash tests/package.sh [BUILD-DIR]      (default build/; prints TAP)
#
# 1. scripts/build-deb builds sbx_*.deb; lintian reports no error (its warnings are printed);
# 2. apt-get installs it; the installed /usr/bin/sbx runs a sandboxed command; man finds sbx(1)
#    and sandbox.ini(5); each shell's completion is where that shell looks; the example config
#    is in /usr/share/doc/sbx; the AppArmor profile in /etc/apparmor.d; apt-get removes it
#    again, leaving none of its files;
# 3. `meson install --destdir` of BUILD-DIR (prefix /usr/local) puts the same files in the same
#    places below its prefix as the package does below /usr.
# Needs scripts/bootstrap --package. Without dpkg-buildpackage it prints "1..0 # SKIP".
set -u
export LC_ALL=C
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}

n=0
failed=0
ok() { n=$((n + 1)) && echo "ok $n - $*"; }
not_ok() { n=$((n + 1)) && failed=$((failed + 1)) && echo "not ok $n - $*"; }
diag() { sed 's/^/# /'; }
# CONDITION; t DESCRIPTION: one test point from the status of the condition before it; fails
# as the condition did, so that "|| diag" can add the details.
t() {
        if [ $? = 0 ]; then ok "$*"; else not_ok "$*" && return 1; fi
}

if ! command -v dpkg-buildpackage >/dev/null || ! command -v lintian >/dev/null; then
        echo "1..0 # SKIP needs dpkg-dev, debhelper and lintian (scripts/bootstrap --package)"
        exit 0
fi
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP installs the package: needs root" && exit 0; }
if dpkg-query -W -f='${Status}' sbx 2>/dev/null | grep -q 'install ok installed'; then
        echo "1..0 # SKIP a package sbx is installed already: not replacing it"
        exit 0
fi

work=$(mktemp -d /tmp/sbx-package.XXXXXX)
installed=false
# a run that stops half-way (a failed check, the CI budget's SIGTERM) still removes the package
cleanup() {
        ! $installed || DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq sbx >/dev/null 2>&1
        rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM
out=$work/deb

# ---- build and lintian -----------------------------------------------------------------------
scripts/build-deb "$out" >"$work/build.log" 2>&1
t "dpkg-buildpackage -us -uc -b builds sbx_*.deb" || diag <"$work/build.log"
deb=$(ls "$out"/sbx_*_*.deb 2>/dev/null | grep -v dbgsym | head -n 1)
[ -n "$deb" ] || {
        echo "1..$n"
        exit 1
}
lintian --tag-display-limit 0 "$out"/sbx_*.changes >"$work/lintian.log" 2>&1
lintian_rc=$?
diag <"$work/lintian.log"
[ "$lintian_rc" = 0 ] && ! grep -q '^E: ' "$work/lintian.log"
t "lintian: no errors"

# ---- install, use, remove --------------------------------------------------------------------
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" \
        >"$work/apt.log" 2>&1
t "apt-get install ./$(basename "$deb")" || diag <"$work/apt.log"
installed=true
rt=$work/rt
mkdir -m 700 "$rt"
got=$(SBX_RUNTIME_DIR=$rt timeout 60 /usr/bin/sbx run -- sh -c 'echo hello from $(id -u)' 2>&1)
[ "$got" = "hello from 0" ] && [ -z "$(ls -A "$rt")" ] &&
        SBX_RUNTIME_DIR=$rt timeout 60 /usr/bin/sbx run -- sh -c 'exit 7'
[ $? = 7 ]
t "the installed /usr/bin/sbx runs a sandboxed command and leaves no session ('$got')"
[ "$(man -w sbx 2>/dev/null)" = /usr/share/man/man1/sbx.1.gz ] &&
        [ "$(man -w 5 sandbox.ini 2>/dev/null)" = /usr/share/man/man5/sandbox.ini.5.gz ] &&
        man 1 sbx 2>/dev/null | grep -q 'sbx exec'
t "man finds and renders sbx(1) and sandbox.ini(5)"
# where each shell looks: bash-completion's directory, zsh's $fpath, fish's path
zsh -fc '[[ -n ${^fpath}/_sbx(#qN) ]]' 2>/dev/null &&
        [ -f "$(pkg-config --variable=completionsdir bash-completion 2>/dev/null ||
                echo /usr/share/bash-completion/completions)/sbx" ] &&
        fish -c 'test -n "$(complete -C "sbx cre")"' 2>/dev/null
t "completions: bash's completions dir, zsh's \$fpath, fish completes 'sbx cre'"
[ -f /usr/share/doc/sbx/sandbox.ini.example ] &&
        grep -q '^# sandbox.ini' /usr/share/doc/sbx/sandbox.ini.example
t "the example config is /usr/share/doc/sbx/sandbox.ini.example"
grep -q '^profile sbx /usr/bin/sbx ' /etc/apparmor.d/sbx 2>/dev/null &&
        grep -q 'userns' /etc/apparmor.d/sbx
t "the AppArmor profile is /etc/apparmor.d/sbx, for /usr/bin/sbx"
files=$(dpkg -L sbx | while read -r f; do [ -d "$f" ] || echo "$f"; done)
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq sbx >"$work/apt.log" 2>&1 && installed=false
left=$(for f in $files; do [ ! -e "$f" ] || echo "$f"; done)
[ -z "$left" ] && ! command -v sbx | grep -q '^/usr/bin/sbx$'
t "apt-get purge sbx removes every file of the package" || echo "$left" | diag

# ---- meson install under another prefix ------------------------------------------------------
# Files relative to their prefix; Debian's own additions (changelog, copyright, README.Debian)
# and its compression of man pages left out; /etc relative to the sysconfdir.
dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./||' |
        grep -v -e '^usr/share/doc/sbx/\(changelog\|copyright\|README.Debian\)' |
        sed -e 's|^usr/||' -e 's|\(man/man[1-8]/.*\)\.gz$|\1|' | sort >"$work/deb.list"
prefix=$(meson introspect "$build" --buildoptions 2>/dev/null |
        python3 -c 'import json, sys
print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
meson install -C "$build" --destdir "$work/root" --no-rebuild >"$work/install.log" 2>&1
t "meson install --destdir (prefix $prefix)" || diag <"$work/install.log"
# (AppArmor reads only /etc/apparmor.d: its profile goes there whatever the prefix)
{
        (cd "$work/root$prefix" 2>/dev/null && find . -type f -o -type l) | sed 's|^\./||'
        (cd "$work/root" 2>/dev/null && find etc/apparmor.d -type f 2>/dev/null)
} | sort >"$work/meson.list"
diff "$work/deb.list" "$work/meson.list" >"$work/diff" 2>&1
t "meson install puts the package's files at the same places below $prefix" || diag <"$work/diff"

echo "1..$n"
[ "$failed" = 0 ]
