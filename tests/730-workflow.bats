#!/usr/bin/env bats
# The platform workflow end to end, as a new user types it (sbx(1) EXAMPLES): a Python image
# with pandas is pulled from a registry, a script is written into the session, run, and its
# result read back. The image is made here by mmdebstrap from Debian packages (python3,
# python3-pandas, python3-pip), once per checkout (kept under build/test-cache/, also for
# build-asan/), laid out as an OCI image by hand, pushed by skopeo to a docker-registry on
# loopback. Also the default packages of an image, installed once and saved as an image for the
# next create.

# the first run builds the image (about 3 minutes); the pull of ~300 MB takes ~20 s
: "${BATS_TEST_TIMEOUT:=300}"
sbx_call_timeout=180

load helpers
load wheel

# build_image DIR: DIR/oci, an OCI layout whose tag "1" is one uncompressed layer, the root
# file system mmdebstrap made.
build_image() {
        local dir=$1 suite
        suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
        rm -rf "$dir.new"
        mkdir -p "$dir.new"
        mmdebstrap --quiet --variant=essential --include=python3,python3-pandas,python3-pip \
                --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
                --dpkgopt='path-exclude=/usr/share/locale/*' \
                "$suite" "$dir.new/rootfs.tar" http://deb.debian.org/debian >"$dir.new/mmdebstrap.log" 2>&1 ||
                { cat "$dir.new/mmdebstrap.log" >&2; return 1; }
        python3 - "$dir.new" "$(dpkg --print-architecture)" <<'PY'
import hashlib, json, os, sys
d, arch = sys.argv[1], sys.argv[2]
blobs = f"{d}/oci/blobs/sha256"
os.makedirs(blobs)
def put(data):
    h = hashlib.sha256(data).hexdigest()
    with open(f"{blobs}/{h}", "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + h, "size": len(data)}
h = hashlib.sha256()
with open(f"{d}/rootfs.tar", "rb") as f:
    for chunk in iter(lambda: f.read(1 << 20), b""):
        h.update(chunk)
layer = {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + h.hexdigest(),
         "size": os.path.getsize(f"{d}/rootfs.tar")}
os.rename(f"{d}/rootfs.tar", f"{blobs}/{h.hexdigest()}")
config = {"architecture": arch, "os": "linux",
          "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
          "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]}}
cfg = dict(put(json.dumps(config).encode()), mediaType="application/vnd.oci.image.config.v1+json")
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": cfg, "layers": [layer]}
m = dict(put(json.dumps(manifest).encode()), mediaType="application/vnd.oci.image.manifest.v1+json",
         annotations={"org.opencontainers.image.ref.name": "1"})
with open(f"{d}/oci/index.json", "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [m]}, f)
with open(f"{d}/oci/oci-layout", "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
PY
        rm -rf "$dir"
        mv "$dir.new" "$dir"
}

setup_file() {
        local t
        for t in mmdebstrap skopeo docker-registry; do
                command -v "$t" >/dev/null || skip "$t is not installed (scripts/bootstrap installs it)"
        done
        # one image for every build directory of the checkout (build/ and build-asan/ in CI)
        cache=${SBX_SRC:+$SBX_SRC/build}/test-cache/py-image
        [ -n "$SBX_SRC" ] || cache=${SBX_BUILD:-$BATS_RUN_TMPDIR}/test-cache/py-image
        if [ ! -s "$cache/oci/index.json" ]; then
                t=$SECONDS
                build_image "$cache"
                echo "# built the python image with mmdebstrap in $((SECONDS - t)) s" >&3
        fi
        wf=$(mktemp -d /tmp/sbx-workflow.XXXXXX)
        export wf cache
        reg_port=$(free_port)
        export reg=127.0.0.1:$reg_port
        printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' \
                "$wf/registry" "$reg" >"$wf/registry.yml"
        docker-registry serve "$wf/registry.yml" >"$wf/registry.log" 2>&1 3>&- &
        echo $! >>"$wf/pids"
        local i
        for i in $(seq 100); do
                curl -fsS --noproxy '*' "http://$reg/v2/" >/dev/null 2>&1 && break
                sleep 0.1
        done
        t=$SECONDS
        skopeo copy -q --dest-tls-verify=false "oci:$cache/oci:1" "docker://$reg/py:1"
        echo "# pushed it with skopeo in $((SECONDS - t)) s" >&3
        # a PyPI-style index on loopback for the default packages
        mkdir -p "$wf/www/simple/sbxtiny"
        mk_wheel "$wf/www/simple/sbxtiny" sbxtiny 1.0
        idx_port=$(free_port)
        export index=http://127.0.0.1:$idx_port/simple
        python3 -m http.server --bind 127.0.0.1 --directory "$wf/www" "$idx_port" \
                >"$wf/http.log" 2>&1 3>&- &
        echo $! >>"$wf/pids"
        for i in $(seq 100); do
                curl -fsS --noproxy '*' "$index/" >/dev/null 2>&1 && break
                sleep 0.1
        done
}

teardown_file() {
        if [ -n "${wf:-}" ]; then
                [ -f "$wf/pids" ] && kill $(cat "$wf/pids") 2>/dev/null
                rm -rf "$wf"
        fi
        return 0
}

setup() {
        setup_sbx
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        export SBX_INSECURE_REGISTRIES=$reg
}
teardown() { teardown_sbx; }

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

@test "workflow: pull a pandas image, write a script, run it, read the result" {
        local t0 ms
        t0=$(date +%s%N)
        sbx_ok image pull "$reg/py:1"
        ms=$(ms_since "$t0")
        [[ $output == "$reg/py:1 sha256:"* ]] || fail "pull printed '$output'"
        echo "# image pull of $(du -sh "$cache/oci" | cut -f1) from the loopback registry: $ms ms" >&3
        new_session --image "$reg/py:1"
        sbx_ok write "$sid" analysis.py - <<'PY'
import pandas as pd
df = pd.DataFrame({"city": ["Oslo", "Lima", "Oslo", "Pune"], "sales": [3, 5, 4, 10]})
out = df.groupby("city", as_index=False)["sales"].sum().sort_values("city")
out.to_csv("result.csv", index=False)
print("pandas", pd.__version__, "rows", len(out))
PY
        sbx_ok exec "$sid" python3 analysis.py
        [[ $output == "pandas "*" rows 3" ]] || fail "the script said '$output'"
        sbx_ok read "$sid" result.csv
        [ "$output" = "$(printf '     1\tcity,sales\n     2\tLima,5\n     3\tOslo,7\n     4\tPune,10')" ] ||
                fail "result.csv: $output"
        sbx_ok cp "$sid:/workspace/result.csv" "$BATS_TEST_TMPDIR/result.csv"
        [ "$(cat "$BATS_TEST_TMPDIR/result.csv")" = "$(printf 'city,sales\nLima,5\nOslo,7\nPune,10')" ] ||
                fail "copied out: $(cat "$BATS_TEST_TMPDIR/result.csv")"
        # the host's base was not the one that ran it: the image's own Python
        sbx_ok exec "$sid" sh -c 'test -e /etc/os-release && ls /usr/lib/python3/dist-packages | grep -c "^pandas$"'
        [ "$output" = 1 ] || fail "no pandas in the image: $output"
        sbx_ok destroy "$sid"
        # the same in one step: --image of an image the store lacks pulls it
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store2
        t0=$(date +%s%N)
        sbx_ok run --image "$reg/py:1" -- python3 -c 'import pandas; print(pandas.DataFrame({"a": [1, 2]}).a.sum())'
        [ "$output" = 3 ] || fail "run: $output"
        echo "# run --image with its pull: $(ms_since "$t0") ms" >&3
}

@test "default packages once: the second create of an image with packages installs nothing" {
        printf '[sandbox]\npackages = sbxtiny\n[packages]\nindex_url = %s\n' "$index" >"$BATS_TEST_TMPDIR/p.ini"
        sbx_ok image pull "$reg/py:1"
        local t0 first second plain wheel_gets
        t0=$(date +%s%N)
        new_session --config "$BATS_TEST_TMPDIR/p.ini" --image "$reg/py:1"
        first=$(ms_since "$t0")
        sbx_ok log "$sid"
        [[ $output == *'"provision_open"'* ]] || fail "the first create installed nothing"
        sbx_ok exec "$sid" python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'
        [ "$output" = 42 ] || fail "first: '$output'"
        sbx_ok image list --json
        [ "$(jq -r '[.[] | select(.name == "sbx-packages")] | length' <<<"$output")" = 1 ] ||
                fail "no saved image: $output"
        wheel_gets=$(grep -c 'GET /simple/sbxtiny/sbxtiny-1.0' "$wf/http.log")
        t0=$(date +%s%N)
        new_session --config "$BATS_TEST_TMPDIR/p.ini" --image "$reg/py:1"
        second=$(ms_since "$t0")
        sbx_ok exec "$sid" python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'
        [ "$output" = 42 ] || fail "second: '$output'"
        sbx_ok log "$sid"
        [[ $output != *'"provision_open"'* ]] || fail "the second create opened the index again"
        [ "$(grep -c 'GET /simple/sbxtiny/sbxtiny-1.0' "$wf/http.log")" = "$wheel_gets" ] ||
                fail "the second create fetched the wheel again"
        t0=$(date +%s%N)
        new_session --image "$reg/py:1"
        plain=$(ms_since "$t0")
        echo "# create --image with packages: first ${first} ms, second ${second} ms, plain ${plain} ms" >&3
        # another package list is another image
        new_session --config "$BATS_TEST_TMPDIR/p.ini" --image "$reg/py:1" --package sbxtiny==1.0
        sbx_ok image list --json
        [ "$(jq -r '[.[] | select(.name == "sbx-packages")] | length' <<<"$output")" = 2 ] ||
                fail "images: $output"
        # once the saved image is removed, the next create installs (and saves) again
        sbx_ok list --quiet
        local s tag
        for s in $output; do sbx_ok destroy "$s"; done
        sbx_ok image list --json
        for tag in $(jq -r '.[] | select(.name == "sbx-packages") | .tag' <<<"$output"); do
                sbx_ok image rm "sbx-packages:$tag"
        done
        new_session --config "$BATS_TEST_TMPDIR/p.ini" --image "$reg/py:1"
        sbx_ok log "$sid"
        [[ $output == *'"provision_open"'* ]] || fail "nothing installed after the rm"
}
