#!/usr/bin/env bats
# The AppArmor profile that lets sbx create user namespaces where AppArmor restricts them
# (apparmor/sbx.in): built with the install path of the binary, installed by `meson install`
# into /etc/apparmor.d when the host has that directory, and accepted by apparmor_parser where
# one that knows the profile's ABI (4.0, which has the "userns" rule) is installed.

load helpers
setup() { setup_sbx; }
teardown() { teardown_sbx; }

@test "the profile names the installed binary, grants userns, stays unconfined otherwise" {
        local p=$SBX_BUILD/apparmor/sbx prefix bindir
        [ -f "$p" ] || fail "no $p"
        prefix=$(meson introspect "$SBX_BUILD" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
        bindir=$(meson introspect "$SBX_BUILD" --buildoptions | jq -r '.[] | select(.name == "bindir") | .value')
        grep -qx 'abi <abi/4.0>,' "$p" || fail "no abi line"
        grep -qx "profile sbx $prefix/$bindir/sbx flags=(unconfined) {" "$p" ||
                fail "profile line: $(grep '^profile' "$p")"
        grep -qx '  userns,' "$p" || fail "no userns rule"
        # nothing but userns is granted and the local include: no other rule lines
        [ "$(grep -Ev '^[[:space:]]*(#|$)' "$p" | grep -Evc '^(abi |include |profile |  userns,|  include if exists <local/sbx>|})')" = 0 ] ||
                fail "other rules: $(cat "$p")"
}

@test "meson install puts it in /etc/apparmor.d (under DESTDIR) where the host has that directory" {
        local dest=$BATS_TEST_TMPDIR/dest
        _expect 0 meson install -C "$SBX_BUILD" --no-rebuild --destdir "$dest"
        if [ -d /etc/apparmor.d ]; then
                cmp "$SBX_BUILD/apparmor/sbx" "$dest/etc/apparmor.d/sbx" || fail "not installed: $(find "$dest" -name sbx)"
        else
                [ ! -e "$dest/etc/apparmor.d/sbx" ] || fail "installed without /etc/apparmor.d on the host"
        fi
}

@test "apparmor_parser accepts it (where the parser knows ABI 4.0)" {
        command -v apparmor_parser >/dev/null || skip "apparmor_parser is not installed"
        [ -e /etc/apparmor.d/abi/4.0 ] || skip "this AppArmor ($(apparmor_parser -V | head -n 1)) predates ABI 4.0 and the userns rule"
        _expect 0 apparmor_parser -Q -K "$SBX_BUILD/apparmor/sbx"
}
