#!/usr/bin/env bats
# sbx image pull (sbx(1) "IMAGES"): against a real registry server from Debian
# (docker-registry) on loopback, with images pushed by skopeo, and against
# tests/registry_fake.py for what a real registry does not do on purpose: a wrong digest, a
# transfer that dies mid-blob, bearer tokens with credentials. Also the docker-archive layout
# that skopeo and podman write, imported from a file.

load helpers

mk_rootfs() {
        local d=$1
        mkdir -p "$d/bin" "$d/etc" "$d/data"
        busybox_root "$d" sh cat echo true
        echo 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
        echo pulled >"$d/data/a"
}

# start_fake MODE [ARGS...]: a registry_fake.py on a free port, its port in $fake_port.
start_fake() {
        local mode=$1
        shift
        rm -f "$fx/fake-$mode.port" "$fx/fake-$mode.log"
        python3 "$SBX_SRC/tests/registry_fake.py" --layout "$fx/oci" --mode "$mode" \
                --port-file "$fx/fake-$mode.port" --log "$fx/fake-$mode.log" "$@" 3>&- &
        echo $! >>"$fx/pids"
        wait_until 10 test -s "$fx/fake-$mode.port" || fail "the fake registry did not start"
        fake_port=$(cat "$fx/fake-$mode.port")
}

setup_file() {
        command -v docker-registry >/dev/null || skip "docker-registry is not installed (scripts/bootstrap installs it)"
        command -v skopeo >/dev/null || skip "skopeo is not installed (scripts/bootstrap installs it)"
        command -v umoci >/dev/null || skip "umoci is not installed (scripts/bootstrap installs it)"
        fx=$(mktemp -d /tmp/sbx-pull.XXXXXX)
        export fx
        mk_rootfs "$fx/rootfs"
        umoci init --layout "$fx/oci"
        umoci new --image "$fx/oci:base"
        umoci unpack --image "$fx/oci:base" "$fx/bundle" >/dev/null
        cp -a "$fx/rootfs/." "$fx/bundle/rootfs/"
        umoci repack --image "$fx/oci:base" "$fx/bundle"
        umoci config --image "$fx/oci:base" --tag v1 --config.env PATH=/bin
        python3 "$SBX_SRC/tests/mk_multiarch.py" "$fx/oci" v1 multi >"$fx/multi.txt"
        reg_port=$(free_port)
        export reg_port
        cat >"$fx/registry.yml" <<EOF
version: 0.1
storage:
  filesystem:
    rootdirectory: $fx/registry
http:
  addr: 127.0.0.1:$reg_port
EOF
        docker-registry serve "$fx/registry.yml" >"$fx/registry.log" 2>&1 3>&- &
        echo $! >>"$fx/pids"
        local i
        for i in $(seq 100); do
                curl -fsS "http://127.0.0.1:$reg_port/v2/" >/dev/null 2>&1 && break
                sleep 0.1
        done
        skopeo copy -q --dest-tls-verify=false "oci:$fx/oci:v1" "docker://127.0.0.1:$reg_port/test/busybox:1"
        skopeo copy -q --all --dest-tls-verify=false "oci:$fx/oci:multi" \
                "docker://127.0.0.1:$reg_port/test/multi:1"
        skopeo copy -q "oci:$fx/oci:v1" "docker-archive:$fx/docker-archive.tar:test/x:v1"
}

teardown_file() {
        if [ -n "${fx:-}" ]; then
                [ -f "$fx/pids" ] && kill $(cat "$fx/pids") 2>/dev/null
                rm -rf "$fx"
        fi
        return 0
}

setup() {
        setup_sbx
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        store=$SBX_IMAGE_STORE
        reg=127.0.0.1:$reg_port
}
teardown() { teardown_sbx; }

# Nothing of a failed pull is an image: no tag, no record, no layer.
no_image() {
        [ ! -d "$store" ] && return 0
        local left
        left=$(find "$store/tags" "$store/images" "$store/layers" -mindepth 1 -maxdepth 1 2>/dev/null)
        [ -z "$left" ] || fail "left in the store:" "$left"
}

layer_gets() { grep -c "GET /v2/$1/blobs/sha256:$2" "$fx/registry.log" || true; }

@test "pull from a real registry: list it, run from it, blobs not kept twice, a layer once" {
        sbx_ok image pull --insecure-registry "$reg/test/busybox:1"
        [[ $output =~ ^$reg/test/busybox:1\ sha256:[0-9a-f]{64}$ ]] || fail "pull printed '$output'"
        [ -z "$stderr" ] || fail "stderr not a terminal, yet: '$stderr'"
        sbx_ok image list --json
        [ "$(json '.[0] | "\(.name):\(.tag) \(.layers) \(.env | join(","))"')" = \
                "$reg/test/busybox:1 1 PATH=/bin" ] || fail "list: $output"
        sbx_ok run --image "$reg/test/busybox:1" -- cat /data/a
        [ "$output" = pulled ] || fail "got '$output'"
        # the blobs were unpacked into the store's layers and are not kept as well
        [ -z "$(find "$store/downloads" -type f)" ] || fail "downloads kept: $(ls -R "$store/downloads")"
        # a second image with the same layer: the layer is not fetched again
        local layer before
        layer=$(jq -r '.layers[0].digest' "$fx/oci/blobs/sha256/$(jq -r '.manifests[] | select(.annotations."org.opencontainers.image.ref.name" == "v1") | .digest' "$fx/oci/index.json" | cut -d: -f2)" | cut -d: -f2)
        before=$(layer_gets test/busybox "$layer")
        [ "$before" -ge 1 ] || fail "the registry log shows no GET of the layer (the test cannot see it)"
        skopeo copy -q --dest-tls-verify=false "oci:$fx/oci:v1" "docker://$reg/test/again:1"
        sbx_ok image pull --insecure-registry "$reg/test/again:1"
        [ "$(layer_gets test/again "$layer")" = 0 ] || fail "the shared layer was fetched again"
        [ "$(find "$store/layers" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ] || fail "two copies of one layer"
        # by digest: stored under the tag sha256-<hex>, the manifest checked against it
        local digest
        digest=$(skopeo inspect --tls-verify=false "docker://$reg/test/busybox:1" | jq -r .Digest)
        sbx_ok image pull --json --insecure-registry "$reg/test/busybox@$digest"
        [ "$(json '"\(.tag) \(.id)"')" = "sha256-${digest#sha256:} $digest" ] || fail "pull: $output"
}

@test "a multi-arch index resolves to this host's platform" {
        [ "$(uname -m)" = x86_64 ] || skip "the fixture's second platform is arm64"
        local want other
        want=$(awk '$1 == "amd64" { print $2 }' "$fx/multi.txt")
        other=$(awk '$1 == "arm64" { print $2 }' "$fx/multi.txt")
        sbx_ok image pull --json --insecure-registry "$reg/test/multi:1"
        [ "sha256:$(json .id | sed 's/^sha256://')" = "$want" ] || fail "id $(json .id), want $want"
        grep -q "GET /v2/test/multi/manifests/$want" "$fx/registry.log" || fail "amd64 manifest not fetched"
        ! grep -q "GET /v2/test/multi/manifests/$other" "$fx/registry.log" || fail "arm64 manifest fetched"
        sbx_ok run --image "$reg/test/multi:1" -- cat /data/a
        [ "$output" = pulled ] || fail "got '$output'"
}

@test "an unknown image, a registry without TLS, a dead port: one clear line, exit 1, nothing stored" {
        sbx_expect 1 image pull --insecure-registry "$reg/test/nope:1"
        [ "$stderr" = "sbx: no image 'test/nope:1' in registry '$reg' (HTTP 404)" ] || fail "stderr: $stderr"
        sbx_expect 1 image pull --json --insecure-registry "$reg/test/busybox:404"
        [ "$(json .error.code)" = not_found ] || fail "json: $output"
        sbx_expect 1 image pull "$reg/test/busybox:1"
        [[ $stderr == *"needs --insecure-registry"* ]] || fail "no hint: $stderr"
        [ "$(wc -l <<<"$stderr")" = 1 ] || fail "more than one line: $stderr"
        sbx_expect 1 image pull --json --insecure-registry "127.0.0.1:$(free_port)/x/y:1"
        [ "$(json .error.code)" = unavailable ] || fail "json: $output"
        no_image
}

@test "bad references and options are usage errors that create nothing" {
        local ref
        for ref in 'BAD REF' 'a/b:' 'x@sha256:123' '-x' 'a//b' "$(printf 'a\033]0;x\007')"; do
                sbx_expect 2 image pull --insecure-registry "$ref"
        done
        sbx_expect 2 image pull
        sbx_expect 2 image pull a b
        sbx_expect 2 image list --insecure-registry
        sbx_expect 2 image import x:1 docker://busybox
        [[ $stderr == *"use 'sbx image pull busybox'"* ]] || fail "stderr: $stderr"
        [ ! -e "$store" ] || [ -z "$(find "$store" -mindepth 2)" ] || fail "created: $(find "$store")"
}

@test "a blob that does not match its digest is refused and nothing of it is imported" {
        start_fake baddigest
        # the positive control: the fake really serves other bytes than the digest names
        local layer
        layer=$(jq -r '.layers[0].digest' "$fx/oci/blobs/sha256/$(jq -r '.manifests[] | select(.annotations."org.opencontainers.image.ref.name" == "v1") | .digest' "$fx/oci/index.json" | cut -d: -f2)")
        [ "sha256:$(curl -fsS "http://127.0.0.1:$fake_port/v2/test/x/blobs/$layer" | sha256sum | cut -d' ' -f1)" != "$layer" ] ||
                fail "the fake served the right bytes: this test could not see a wrong digest"
        sbx_expect 1 image pull --insecure-registry "127.0.0.1:$fake_port/test/x:v1"
        [[ $stderr == *"does not match its digest"* ]] || fail "stderr: $stderr"
        no_image
        sbx_ok image list --json
        [ "$output" = "[]" ] || fail "list: $output"
}

@test "a registry that dies mid-blob: a clear error, and the next pull resumes with a Range" {
        start_fake die
        sbx_expect 1 image pull --insecure-registry "127.0.0.1:$fake_port/test/x:v1"
        [[ $stderr == *"failed to fetch from registry"* ]] || fail "stderr: $stderr"
        no_image
        local part
        part=$(find "$store/downloads" -name '*.partial' -size +0 | head -n 1)
        [ -n "$part" ] || fail "no partial blob kept"
        local have
        have=$(stat -c %s "$part")
        sbx_ok image pull --insecure-registry "127.0.0.1:$fake_port/test/x:v1"
        grep -q "range=bytes=$have-" "$fx/fake-die.log" || fail "no resume: $(cat "$fx/fake-die.log")"
        sbx_ok run --image "127.0.0.1:$fake_port/test/x:v1" -- cat /data/a
        [ "$output" = pulled ] || fail "got '$output'"
}

@test "a token endpoint that answers with a challenge again is not followed round: exit 1" {
        start_fake tokenloop
        sbx_expect 1 image pull --insecure-registry "127.0.0.1:$fake_port/test/x:v1"
        [[ $stderr == *"refused a token (HTTP 401)"* ]] || fail "stderr: $stderr"
        # positive control: the fake did challenge the token request itself
        grep -q "GET /token" "$fx/fake-tokenloop.log" || fail "no token was asked for"
        [ "$(grep -c "GET /token" "$fx/fake-tokenloop.log")" -eq 1 ] ||
                fail "the token was asked for $(grep -c "GET /token" "$fx/fake-tokenloop.log") times"
        no_image
}

@test "bearer tokens: refused without credentials, granted with those of the auth file" {
        start_fake token --user alice:s3cret
        sbx_expect 1 image pull --insecure-registry "127.0.0.1:$fake_port/test/x:v1"
        [[ $stderr == *"refused a token"* ]] || fail "stderr: $stderr"
        no_image
        printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}' "$fake_port" \
                "$(printf alice:s3cret | base64)" >"$BATS_TEST_TMPDIR/auth.json"
        REGISTRY_AUTH_FILE=$BATS_TEST_TMPDIR/auth.json sbx_ok image pull --insecure-registry \
                "127.0.0.1:$fake_port/test/x:v1"
        grep -q "GET /token.* auth=True" "$fx/fake-token.log" || fail "no token asked with credentials"
        grep -q "GET /v2/test/x/blobs/.* auth=True" "$fx/fake-token.log" || fail "blob fetched without the token"
        # a wrong password is refused again
        printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}' "$fake_port" \
                "$(printf alice:wrong | base64)" >"$BATS_TEST_TMPDIR/auth.json"
        SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store2 REGISTRY_AUTH_FILE=$BATS_TEST_TMPDIR/auth.json \
                sbx_expect 1 image pull --insecure-registry "127.0.0.1:$fake_port/test/x:v1"
}

@test "progress on a terminal: one line rewritten in place, cleared at the end" {
        command -v script >/dev/null || skip "script (bsdutils) is not installed"
        SBX_IMAGE_STORE=$store script -qec "$SBX image pull --insecure-registry $reg/test/busybox:1" \
                /dev/null >"$BATS_TEST_TMPDIR/tty.out" </dev/null
        grep -aq 'pulling layer 1/1 sha256:' "$BATS_TEST_TMPDIR/tty.out" ||
                fail "no progress line: $(cat -v "$BATS_TEST_TMPDIR/tty.out")"
        [ "$(grep -ac $'\n' "$BATS_TEST_TMPDIR/tty.out")" -le 1 ] || fail "progress took several lines"
}

@test "--image of an image the store lacks is pulled ([images] pull = missing), unless never" {
        SBX_IMAGE_PULL=never SBX_INSECURE_REGISTRIES=$reg sbx_expect 1 run --image "$reg/test/busybox:1" -- true
        [[ $stderr == *"no image '$reg/test/busybox:1'"* ]] || fail "stderr: $stderr"
        no_image
        # without the registry named insecure, the pull tries HTTPS and says what to do
        sbx_expect 1 run --image "$reg/test/busybox:1" -- true
        [[ $stderr == *"insecure_registries"* ]] || fail "stderr: $stderr"
        printf '[images]\ninsecure_registries = %s\n' "$reg" >"$BATS_TEST_TMPDIR/i.ini"
        sbx_ok run --config "$BATS_TEST_TMPDIR/i.ini" --image "$reg/test/busybox:1" -- cat /data/a
        [ "$output" = pulled ] || fail "got '$output'"
        sbx_ok image list --json
        [ "$(json length)" = 1 ] || fail "list: $output"
        # once there, nothing is fetched: the same works with pulls turned off
        SBX_IMAGE_PULL=never sbx_ok run --image "$reg/test/busybox:1" -- cat /data/a
        # bad values of the keys are usage errors
        SBX_IMAGE_PULL=sometimes sbx_expect 2 run -- true
        SBX_INSECURE_REGISTRIES='a b' sbx_expect 2 run -- true
        SBX_INSECURE_REGISTRIES='host:port' sbx_expect 2 run -- true
}

@test "a docker-archive written by skopeo (layers as <hex>.tar) imports and runs" {
        tar -tf "$fx/docker-archive.tar" | grep -qE '^[0-9a-f]{64}\.tar$' ||
                fail "the fixture does not have the <hex>.tar layout this test is about"
        sbx_ok image import da:1 "$fx/docker-archive.tar"
        sbx_ok run --image da:1 -- cat /data/a
        [ "$output" = pulled ] || fail "got '$output'"
}
