#!/usr/bin/env bats
# Images (docs/DESIGN.md "Images"): real OCI layouts built with umoci from a busybox rootfs,
# imported from a directory, an oci-archive tar, a docker-save archive and a plain rootfs
# tarball; run from; layers shared by sessions, never copied; whiteouts and opaque
# directories; Env and WorkingDir; `image rm` refused while in use. Hostile archives built
# with Python's tarfile must be neutralised or refused without writing outside the store or
# leaving a half-imported image. Packages from a wheel directory made here (no index), the
# setup command, and their failures. The unprivileged user's store.

BATS_TEST_TIMEOUT=300
load helpers
load wheel

# ---- fixtures (once per file) -------------------------------------------------------------

# mk_rootfs DIR: a tiny busybox root filesystem.
mk_rootfs() {
        local d=$1
        mkdir -p "$d/bin" "$d/etc" "$d/data" "$d/opq" "$d/gone"
        busybox_root "$d" sh ls cat echo env pwd id true stat test mkdir rm sleep readlink wc
        echo 'root:x:0:0:root:/root:/bin/sh' >"$d/etc/passwd"
        echo hello >"$d/data/a"
        echo bee >"$d/data/b"
        echo old1 >"$d/opq/old1"
        echo old2 >"$d/opq/old2"
        echo x >"$d/gone/x"
}

# A layer with an OCI whiteout (data/b, gone/) and an opaque directory (opq/ with only new).
mk_whiteout_layer() {
        python3 - "$1" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    def add(name, data=None, kind=tarfile.REGTYPE, mode=0o644):
        ti = tarfile.TarInfo(name); ti.type = kind; ti.mode = mode
        if data is not None: ti.size = len(data)
        t.addfile(ti, io.BytesIO(data) if data is not None else None)
    add("data/.wh.b", b"")
    add(".wh.gone", b"")
    add("opq", kind=tarfile.DIRTYPE, mode=0o755)
    add("opq/.wh..wh..opq", b"")
    add("opq/new", b"new\n")
EOF
}

# docker-save archive from the OCI layout's TAG: uncompressed layers named by diff_id.
mk_docker_save() {
        python3 - "$1" "$2" "$3" <<'EOF'
import gzip, hashlib, json, os, sys, tarfile, io
oci, tag, out = sys.argv[1:]
blob = lambda d: open(os.path.join(oci, "blobs", "sha256", d.split(":")[1]), "rb").read()
idx = json.load(open(os.path.join(oci, "index.json")))
desc = [m for m in idx["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag][0]
man = json.loads(blob(desc["digest"]))
cfg = blob(man["config"]["digest"])
cfg_hex = hashlib.sha256(cfg).hexdigest()
with tarfile.open(out, "w") as t:
    def put(name, data):
        ti = tarfile.TarInfo(name); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
    layers = []
    for l in man["layers"]:
        data = gzip.decompress(blob(l["digest"]))
        h = hashlib.sha256(data).hexdigest()
        put(h + "/layer.tar", data); layers.append(h + "/layer.tar")
    put(cfg_hex + ".json", cfg)
    put("manifest.json", json.dumps([{"Config": cfg_hex + ".json", "RepoTags": ["bb:" + tag], "Layers": layers}]).encode())
EOF
}

setup_file() {
        command -v umoci >/dev/null || skip "umoci is not installed (scripts/bootstrap installs it)"
        [ -x /bin/busybox ] || skip "busybox-static is not installed (scripts/bootstrap)"
        fx=$(mktemp -d /tmp/sbx-images.XXXXXX)
        chmod 0755 "$fx"
        export fx
        mk_rootfs "$fx/rootfs"
        umoci init --layout "$fx/oci"
        umoci new --image "$fx/oci:base"
        umoci unpack --image "$fx/oci:base" "$fx/bundle" >/dev/null
        cp -a "$fx/rootfs/." "$fx/bundle/rootfs/"
        umoci repack --image "$fx/oci:base" "$fx/bundle"
        umoci config --image "$fx/oci:base" --tag v1 --config.env FOO=bar \
                --config.env PATH=/bin --config.workingdir /data
        mk_whiteout_layer "$fx/wh.tar"
        umoci raw add-layer --image "$fx/oci:v1" --tag v2 "$fx/wh.tar"
        tar -C "$fx/oci" -cf "$fx/oci-archive.tar" .
        mk_docker_save "$fx/oci" v1 "$fx/docker.tar"
        tar -C "$fx/rootfs" -czf "$fx/rootfs.tar.gz" .
        chmod -R a+rX "$fx"
}

teardown_file() {
        [ -n "${fx:-}" ] && rm -rf "$fx"
        return 0
}

setup() {
        setup_sbx
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store
        store=$SBX_IMAGE_STORE
}
teardown() {
        # the small store of the free-space test, also when it failed half way
        ! mountpoint -q "$BATS_TEST_TMPDIR/small" || umount "$BATS_TEST_TMPDIR/small"
        teardown_sbx
}

# Nothing of a failed import: no tag, no record, no layer, nothing in tmp/.
store_is_empty() {
        [ ! -d "$store" ] && return 0
        local left
        left=$(find "$store/tags" "$store/images" "$store/layers" "$store/tmp" -mindepth 1 -maxdepth 1 2>/dev/null)
        [ -z "$left" ] || fail "left in the store:" "$left"
}

layer_dirs() {
        find "$store/layers" -mindepth 1 -maxdepth 1 -type d | wc -l
}

# ---- import and run -------------------------------------------------------------------

@test "import an OCI layout directory, list it, run from it with its Env and WorkingDir" {
        sbx_ok image import bb:v1 "$fx/oci"
        [[ $output =~ ^sha256:[0-9a-f]{64}$ ]] || fail "import printed '$output'"
        sbx_ok image list --json
        json_doc
        [ "$(json '.[0] | "\(.name):\(.tag) \(.layers) \(.workdir) \(.env | join(","))"')" = \
                "bb:v1 1 /data FOO=bar,PATH=/bin" ] || fail "list: $output"
        sbx_ok run --image bb:v1 -- sh -c 'echo "$(pwd) $FOO $PATH $(cat a) $(id -u)"'
        [ "$output" = "/data bar /bin hello 0" ] || fail "got '$output'"
        # --env and --workdir win over the image's
        sbx_ok run --image bb:v1 --env FOO=mine --workdir /tmp -- sh -c 'echo "$(pwd) $FOO"'
        [ "$output" = "/tmp mine" ] || fail "got '$output'"
        # sandbox.ini image = ...
        printf '[sandbox]\nimage = bb:v1\n' >"$BATS_TEST_TMPDIR/i.ini"
        sbx_ok run --config "$BATS_TEST_TMPDIR/i.ini" -- cat /data/a
        [ "$output" = hello ] || fail "got '$output'"
        # --read-only keeps the image's root read-only, /workspace writable
        sbx_ok run --image bb:v1 --read-only -- sh -c 'echo x > /data/z 2>/dev/null && echo wrote; echo y > /workspace/y && echo ws'
        [ "$output" = ws ] || fail "read-only image root: '$output'"
        # nothing of the store is visible inside
        sbx_ok run --image bb:v1 -- sh -c 'ls -a / | xargs; test -e /lower-img && echo store-visible; true'
        [ "$output" = ". .. bin data dev etc gone opq proc tmp workspace" ] || fail "root: '$output'"
        # the host's /usr is not there: this is the image's root
        sbx_ok run --image bb:v1 -- sh -c 'test -e /usr/bin/python3 && echo host || echo image'
        [ "$output" = image ] || fail "got '$output'"
}

@test "import an oci-archive tar, a docker-save archive and a plain rootfs tarball" {
        sbx_ok image import arch:v1 "$fx/oci-archive.tar"
        local arch_id=$output
        sbx_ok image import dock:v1 "$fx/docker.tar"
        sbx_ok image import plain "$fx/rootfs.tar.gz"
        sbx_ok image list --json
        [ "$(json '[.[] | "\(.name):\(.tag)"] | join(" ")')" = "arch:v1 dock:v1 plain:latest" ] ||
                fail "list: $output"
        [ "$(json '.[] | select(.name == "dock") | .env | join(",")')" = "FOO=bar,PATH=/bin" ] ||
                fail "docker env: $output"
        local img
        for img in arch:v1 dock:v1 plain; do
                sbx_ok run --image "$img" -- cat /data/a
                [ "$output" = hello ] || fail "$img: got '$output'"
        done
        # DIR:REF picks the image tagged REF whatever the tag given to it here
        sbx_ok image import mine:first "$fx/oci:v2"
        sbx_ok run --image mine:first -- sh -c 'test -e /data/b || echo v2'
        [ "$output" = v2 ] || fail "DIR:REF did not pick v2: $output"
        sbx_expect 1 image import mine:second "$fx/oci"
        [[ $stderr == *"several images"* ]] || fail "stderr: $stderr"
        # the same OCI image from the directory is the same image (same id, no new layer)
        local n
        n=$(layer_dirs)
        sbx_ok image import dir:v1 "$fx/oci"
        [ "$output" = "$arch_id" ] || fail "ids differ: $output vs $arch_id"
        [ "$(layer_dirs)" = "$n" ] || fail "the layer was unpacked again"
}

@test "hostile: a docker-save archive with a copied config and other layers never passes for the image" {
        # evil.tar: the config of docker.tar byte for byte (so the same image id), and a layer
        # of its own named by its own digest
        python3 - "$fx/docker.tar" "$BATS_TEST_TMPDIR/evil.tar" <<'EOF2'
import hashlib, io, json, sys, tarfile
src, out = sys.argv[1:]
with tarfile.open(src) as t:
    man = json.load(t.extractfile("manifest.json"))
    cfg_name = man[0]["Config"]
    cfg = t.extractfile(cfg_name).read()
lb = io.BytesIO()
with tarfile.open(fileobj=lb, mode="w") as l:
    for name, data in (("data", None), ("data/a", b"EVIL\n")):
        ti = tarfile.TarInfo(name)
        if data is None:
            ti.type, ti.mode = tarfile.DIRTYPE, 0o755
            l.addfile(ti)
        else:
            ti.size = len(data)
            l.addfile(ti, io.BytesIO(data))
layer = lb.getvalue()
lname = "blobs/sha256/" + hashlib.sha256(layer).hexdigest()
with tarfile.open(out, "w") as t:
    def put(name, data):
        ti = tarfile.TarInfo(name); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
    put(lname, layer)
    put(cfg_name, cfg)
    put("manifest.json", json.dumps([{"Config": cfg_name, "RepoTags": ["x:1"], "Layers": [lname]}]).encode())
EOF2
        # the attacker's archive first: the trusted one, imported next, is refused, not replaced
        sbx_ok image import foo:1 "$BATS_TEST_TMPDIR/evil.tar"
        local id=$output
        sbx_expect 1 image import --json dock:v1 "$fx/docker.tar"
        [ "$(json .error.code)" = exists ] || fail "$output"
        [[ $stderr == *"same configuration but other layers"* ]] || fail "stderr: $stderr"
        sbx_expect 1 run --image dock:v1 -- cat /data/a
        # and the other way round
        export SBX_IMAGE_STORE=$BATS_TEST_TMPDIR/store2
        sbx_ok image import dock:v1 "$fx/docker.tar"
        # positive control: the two archives do have the same id (what made them collide)
        [ "$output" = "$id" ] || fail "ids differ ($output, $id): the test would prove nothing"
        sbx_expect 1 image import foo:1 "$BATS_TEST_TMPDIR/evil.tar"
        sbx_ok run --image dock:v1 -- cat /data/a
        [ "$output" = hello ] || fail "dock:v1 runs '$output'"
}

@test "hostile: a tarball whose header makes libarchive allocate without end fails within 1 GiB" {
        # one GNU sparse 1.0 entry whose map lists 30 million empty blocks (~47 bytes each in
        # libarchive, ~1.4 GB) in 60 KB of gzip
        python3 - "$BATS_TEST_TMPDIR/sparse.tar.gz" <<'EOF2'
import gzip, sys
N = 30_000_000
def hdr(name, size, typ):
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108] = b"0000644\0"; h[108:116] = b"0000000\0"; h[116:124] = b"0000000\0"
    h[124:136] = ("%011o\0" % size).encode(); h[136:148] = b"00000000000\0"
    h[156:157] = typ; h[257:263] = b"ustar\0"; h[263:265] = b"00"
    h[148:156] = b"        "; h[148:156] = ("%06o\0 " % sum(h)).encode()
    return bytes(h)
pad = lambda n: b"\0" * ((512 - n % 512) % 512)
recs = b""
for k, v in (("GNU.sparse.major", "1"), ("GNU.sparse.minor", "0"), ("GNU.sparse.name", "big"),
             ("GNU.sparse.realsize", "0")):
    body = "%s=%s\n" % (k, v); n = len(body) + 1
    while len(str(n)) + len(body) + 1 != n:
        n = len(str(n)) + len(body) + 1
    recs += ("%d %s" % (n, body)).encode()
with gzip.open(sys.argv[1], "wb", compresslevel=6) as out:
    out.write(hdr("PaxHeaders/big", len(recs), b"x") + recs + pad(len(recs)))
    head = b"%d\n" % N
    size = len(head) + 4 * N
    out.write(hdr("GNUSparseFile.0/big", size + len(pad(size)), b"0") + head)
    chunk = b"0\n0\n" * 100_000
    for _ in range(N // 100_000):
        out.write(chunk)
    out.write(pad(size) + b"\0" * 1024)
EOF2
        _expect 1 python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)' "$SBX" image import sp:1 "$BATS_TEST_TMPDIR/sparse.tar.gz"
        # (an sbx without the bound imports it, exit 0, at ~1.4 GB)
        [ "$output" -lt $((1300 * 1024)) ] || fail "peak RSS ${output} KiB" # 1 GiB + ASan shadow
        sbx_ok image list --json
        [ "$output" = "[]" ] || fail "an image was recorded: $output"
        # what the failed import left in the store's tmp/ goes with the next one, which works
        sbx_ok image import plain "$fx/rootfs.tar.gz"
        [ -z "$(ls -A "$store/tmp")" ] || fail "left in tmp/: $(ls -A "$store/tmp")"
}

@test "an archive bigger than the store's free space stops short of filling it; zeros cost no disk" {
        [ "$(id -u)" = 0 ] || skip "mounts a small tmpfs for the store (root)"
        local small=$BATS_TEST_TMPDIR/small src=$BATS_TEST_TMPDIR/src
        mkdir -p "$small" "$src/blobs/sha256"
        mount -t tmpfs -o size=64m tmpfs "$small"
        export SBX_IMAGE_STORE=$small/store
        # 84 MB of random data in a layout archive (the copy out of it comes first), in blobs
        # of 7 MB: each below the 8 MiB between two checks, so the count spans the archive
        local i
        for i in $(seq 1 12); do
                head -c 7000000 /dev/urandom >"$src/blobs/sha256/$(printf '%064d' "$i")"
        done
        echo '{"imageLayoutVersion":"1.0.0"}' >"$src/oci-layout"
        echo '{"schemaVersion":2,"manifests":[]}' >"$src/index.json"
        tar -C "$src" -cf "$BATS_TEST_TMPDIR/big.tar" oci-layout index.json blobs
        rm -rf "$src"
        sbx_expect 1 image import --json big:1 "$BATS_TEST_TMPDIR/big.tar"
        [ "$(json .error.code)" = limit ] || fail "$output"
        [[ $stderr == *"would leave less than 16 MiB free"* ]] || fail "stderr: $stderr"
        # (an sbx without the check, or with it per entry, failed on a full file system: "No
        # space left on device")
        [ "$(df --output=used -m "$small" | tail -1)" -lt 8 ] || fail "left behind: $(du -sh "$small")"
        # 200 MiB of zeros in 200 KiB of gzip: copied as holes, nothing fills the store
        python3 -c 'import gzip, io, sys, tarfile
with gzip.open(sys.argv[1], "wb") as g, tarfile.open(fileobj=g, mode="w") as t:
    for name, data in (("oci-layout", b"{\"imageLayoutVersion\":\"1.0.0\"}"),
                       ("index.json", b"{\"schemaVersion\":2,\"manifests\":[]}")):
        ti = tarfile.TarInfo(name); ti.size = len(data); t.addfile(ti, io.BytesIO(data))
    ti = tarfile.TarInfo("blobs/sha256/" + "0" * 63 + "2"); ti.size = 200 << 20
    class Z:
        def read(self, n=-1): return bytes(n)
    t.addfile(ti, Z())' "$BATS_TEST_TMPDIR/zeros.tar.gz"
        # copied whole, they reach the check of the index (an sbx writing them out failed
        # before it, on a full file system)
        sbx_expect 2 image import zeros:1 "$BATS_TEST_TMPDIR/zeros.tar.gz"
        [[ $stderr == *"the index lists no manifest"* ]] || fail "stderr: $stderr"
}

@test "sessions share the image's layers: same inode, nothing copied, writes stay private" {
        sbx_ok image import bb:v1 "$fx/oci"
        sbx_ok image import other:v1 "$fx/oci"
        [ "$(layer_dirs)" = 1 ] || fail "two imports of one image made $(layer_dirs) layers"
        local layer ino s1 s2 before
        layer=$(find "$store/layers" -mindepth 1 -maxdepth 1 -type d)
        ino=$(stat -c %i "$layer/data/a")
        before=$(du -s --inodes "$store" | cut -f1)
        new_session --image bb:v1
        s1=$sid
        new_session --image other:v1
        s2=$sid
        sbx_ok exec "$s1" stat -c %i /data/a
        [ "$output" = "$ino" ] || fail "session 1 sees inode $output, the store has $ino"
        sbx_ok exec "$s2" stat -c %i /data/a
        [ "$output" = "$ino" ] || fail "session 2 sees inode $output, the store has $ino"
        [ "$(du -s --inodes "$store" | cut -f1)" = "$before" ] || fail "the store grew"
        sbx_ok exec "$s1" sh -c 'echo changed > /data/a && echo new > /data/c'
        sbx_ok exec "$s2" cat /data/a
        [ "$output" = hello ] || fail "session 2 sees session 1's write: $output"
        [ "$(cat "$layer/data/a")" = hello ] && [ ! -e "$layer/data/c" ] ||
                fail "a session wrote into the shared layer"
        sbx_ok destroy "$s1" "$s2"
}

@test "whiteouts and opaque directories of upper layers hide lower content" {
        sbx_ok image import bb:v2 "$fx/oci"
        sbx_ok run --image bb:v2 -- sh -c 'ls /data | xargs; ls /opq | xargs; test -e /gone && echo gone-present || echo gone-hidden'
        [ "$output" = "$(printf 'a\nnew\ngone-hidden')" ] || fail "got '$output'"
        # the lower layer is the same as v1's and still has them (shared, not rewritten)
        sbx_ok image import bb:v1 "$fx/oci"
        sbx_ok run --image bb:v1 -- sh -c 'echo $(ls /data) $(ls /opq)'
        [[ $output == *"b"* && $output == *"old1"* ]] || fail "v1 lost content: $output"
        [ "$(layer_dirs)" = 2 ] || fail "expected 2 layers, got $(layer_dirs)"
}

@test "libarchive is loaded by import alone: sbx needs only libc, a broken one fails import cleanly" {
        # every sbx call pays for what it links (1.7 ms for libarchive and what it pulls in);
        # the dynamic loader itself is mapped in any case
        local needed
        needed=$(readelf -d "$SBX" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
                grep -v -e '^ld-linux' -e '^libasan' -e '^libubsan' -e '^libstdc++' -e '^libm\.' -e '^libgcc_s' | xargs)
        [ "$needed" = libc.so.6 ] || fail "sbx links more than libc: $needed"
        # a libarchive that cannot be loaded: one clear line, no half-made image
        mkdir "$BATS_TEST_TMPDIR/lib"
        echo 'not an ELF object' >"$BATS_TEST_TMPDIR/lib/libarchive.so.13"
        LD_LIBRARY_PATH=$BATS_TEST_TMPDIR/lib sbx_expect 4 image import broken "$fx/rootfs.tar.gz"
        [[ $stderr == *"image import needs libarchive.so.13"* ]] || fail "stderr: $stderr"
        [ "$(grep -c . <<<"$stderr")" = 1 ] || fail "more than one line: $stderr"
        store_is_empty
        # and the same sbx imports with the real one
        sbx_ok image import fine "$fx/rootfs.tar.gz"
}

# The session's shared lock on the image goes before destroy answers (it went with the
# supervisor's exit, just after the answer: an `image rm` straight after lost about one time in
# thirty here).
@test "image rm right after destroy never finds the image in use (10 times)" {
        local i
        for i in 1 2 3 4 5 6 7 8 9 10; do
                sbx_ok image import bb:v1 "$fx/oci"
                new_session --image bb:v1
                sbx_ok destroy "$sid"
                sbx_ok image rm bb:v1
        done
        store_is_empty
}

@test "image rm is refused while a session uses the image, then removes unused layers" {
        sbx_ok image import bb:v1 "$fx/oci"
        new_session --image bb:v1
        sbx_expect 1 image rm bb:v1
        [[ $stderr == *"in use"* ]] || fail "stderr: $stderr"
        sbx_expect 1 image rm --json bb:v1
        json_doc
        [ "$(json .error.code)" = exists ] || fail "code: $output"
        sbx_ok image list --json
        [ "$(json '.[0].in_use')" = true ] || fail "list: $output"
        sbx_ok destroy "$sid"
        sbx_ok image rm --json bb:v1
        [ "$(json '"\(.name):\(.tag)"')" = bb:v1 ] || fail "rm: $output"
        sbx_ok image list --json
        [ "$output" = "[]" ] || fail "list after rm: $output"
        store_is_empty
        sbx_expect 1 image rm bb:v1
        # (an image the store lacks would be pulled from docker.io: not here)
        SBX_IMAGE_PULL=never sbx_expect 1 run --image bb:v1 -- true
        [[ $stderr == *"no image 'bb:v1'"* ]] || fail "stderr: $stderr"
}

@test "image: usage errors" {
        sbx_expect 2 image
        sbx_expect 2 image frob
        sbx_expect 2 image import 'Bad:Name' "$fx/oci"
        sbx_expect 2 image import onlyname
        sbx_expect 1 image import x "$BATS_TEST_TMPDIR/does-not-exist"
        sbx_expect 2 image import x "$BATS_TEST_TMPDIR"
        sbx_expect 2 create --image bb --rootfs /tmp
        store_is_empty
}

# ---- hostile archives ---------------------------------------------------------------------

# hostile NAME PYTHON: write $BATS_TEST_TMPDIR/NAME.tar with the tarfile code given (t is
# the open archive, add(name, data=..., kind=..., mode=..., link=..., size=...) adds one).
hostile() {
        python3 - "$BATS_TEST_TMPDIR/$1.tar" "$2" <<'EOF'
import io, sys, tarfile
out, code = sys.argv[1], sys.argv[2]
with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as t:
    def add(name, data=None, kind=tarfile.REGTYPE, mode=0o644, link="", major=0, minor=0):
        ti = tarfile.TarInfo(name); ti.type = kind; ti.mode = mode; ti.linkname = link
        ti.devmajor, ti.devminor = major, minor
        if data is not None: ti.size = len(data)
        t.addfile(ti, io.BytesIO(data) if data is not None else None)
    add("bin", kind=tarfile.DIRTYPE, mode=0o755)
    exec(code)
EOF
}

@test "hostile: '..' entries and writes through symlinks fail cleanly, nothing outside" {
        public_dir
        local target=$pubdir/escape
        hostile dotdot "add('../../../../../..$target', b'pwned')"
        sbx_expect 2 image import evil "$BATS_TEST_TMPDIR/dotdot.tar"
        [[ $stderr == *"'..'"* ]] || fail "stderr: $stderr"
        [ ! -e "$target" ] || fail "'..' wrote $target"
        store_is_empty
        hostile symlink "add('link', kind=tarfile.SYMTYPE, link='$pubdir'); add('link/pwned', b'pwned')"
        sbx_expect 2 image import evil "$BATS_TEST_TMPDIR/symlink.tar"
        [[ $stderr == *"symlink"* ]] || fail "stderr: $stderr"
        [ ! -e "$pubdir/pwned" ] || fail "wrote through the symlink"
        store_is_empty
        # a directory replaced by a symlink between two entries below it
        hostile swap "add('d', kind=tarfile.DIRTYPE, mode=0o755); add('d/x', b'x'); add('d', kind=tarfile.SYMTYPE, link='$pubdir'); add('d/pwned3', b'x')"
        sbx_expect 2 image import evil "$BATS_TEST_TMPDIR/swap.tar"
        [ ! -e "$pubdir/pwned3" ] || fail "wrote through the swapped-in symlink"
        store_is_empty
        # a relative symlink chain climbing out is refused the same way
        hostile symlink2 "add('up', kind=tarfile.SYMTYPE, link='../../../../../../..$pubdir'); add('up/pwned2', b'x')"
        sbx_expect 2 image import evil "$BATS_TEST_TMPDIR/symlink2.tar"
        [ ! -e "$pubdir/pwned2" ] || fail "wrote through the relative symlink"
        store_is_empty
}

@test "hostile: absolute names stay inside the layer; hard links to outside are refused" {
        public_dir
        hostile abs "add('$pubdir/abs', b'inside')"
        sbx_ok image import abs "$BATS_TEST_TMPDIR/abs.tar"
        [ ! -e "$pubdir/abs" ] || fail "an absolute name was written on the host"
        [ "$(cat "$(find "$store/layers" -path "*$pubdir/abs")")" = inside ] ||
                fail "the entry is not inside the layer"
        echo secret >"$pubdir/secret"
        hostile hard "add('hl', kind=tarfile.LNKTYPE, link='../../../../../../..$pubdir/secret')"
        sbx_expect 2 image import evil "$BATS_TEST_TMPDIR/hard.tar"
        hostile hard2 "add('hl', kind=tarfile.LNKTYPE, link='$pubdir/secret')"
        sbx_expect 2 image import evil "$BATS_TEST_TMPDIR/hard2.tar"
        [[ $stderr == *"hard link"* ]] || fail "stderr: $stderr"
        [ "$(stat -c %h "$pubdir/secret")" = 1 ] || fail "the host file got a new link"
        # a hard link inside the layer is fine
        hostile hard3 "add('bin/f', b'same'); add('bin/g', kind=tarfile.LNKTYPE, link='bin/f')"
        sbx_ok image import okhard "$BATS_TEST_TMPDIR/hard3.tar"
        local f
        f=$(find "$store/layers" -path '*/bin/g')
        [ "$(stat -c %h "$f")" = 2 ] || fail "the in-layer hard link was not made"
}

@test "hostile: device nodes are dropped, setuid and setgid bits stripped" {
        hostile devs "add('bin/mem', kind=tarfile.CHRTYPE, major=1, minor=1, mode=0o666); add('bin/sda', kind=tarfile.BLKTYPE, major=8, minor=0); add('bin/suid', b'#!/bin/sh\n', mode=0o6755); add('sdir', kind=tarfile.DIRTYPE, mode=0o3777)"
        sbx_ok image import devs "$BATS_TEST_TMPDIR/devs.tar"
        local layer
        layer=$(find "$store/layers" -mindepth 1 -maxdepth 1 -type d)
        [ ! -e "$layer/bin/mem" ] && [ ! -e "$layer/bin/sda" ] || fail "a device node was created"
        [ "$(stat -c %a "$layer/bin/suid")" = 755 ] || fail "suid file: $(stat -c %a "$layer/bin/suid")"
        [ "$(stat -c %a "$layer/sdir")" = 1777 ] || fail "setgid dir: $(stat -c %a "$layer/sdir")"
        [ -z "$(find "$store" -perm /6000 -o -type b -o -type c ! -empty)" ] ||
                fail "setuid/setgid or device files in the store"
}

@test "hostile: huge and sparse entries hit the size bound, nothing is left" {
        # a header claiming 100 GiB with almost no data behind it
        python3 - "$BATS_TEST_TMPDIR/huge.tar" <<'EOF'
import sys, tarfile
ti = tarfile.TarInfo("huge"); ti.size = 100 << 30
with open(sys.argv[1], "wb") as f:
    f.write(ti.tobuf(tarfile.GNU_FORMAT)); f.write(b"x" * 512); f.write(b"\0" * 1024)
EOF
        sbx_expect 1 image import huge "$BATS_TEST_TMPDIR/huge.tar"
        [[ $stderr == *"too large"* ]] || fail "stderr: $stderr"
        store_is_empty
        # a real GNU sparse file of 40 GiB (a few bytes of data)
        mkdir "$BATS_TEST_TMPDIR/sp"
        truncate -s 40G "$BATS_TEST_TMPDIR/sp/sparse"
        echo data >>"$BATS_TEST_TMPDIR/sp/sparse"
        tar -C "$BATS_TEST_TMPDIR/sp" --sparse -cf "$BATS_TEST_TMPDIR/sparse.tar" sparse
        rm -f "$BATS_TEST_TMPDIR/sp/sparse"
        [ "$(stat -c %s "$BATS_TEST_TMPDIR/sparse.tar")" -lt 1048576 ] || fail "tar did not make a sparse entry"
        sbx_expect 1 image import sparse "$BATS_TEST_TMPDIR/sparse.tar"
        [[ $stderr == *"too large"* ]] || fail "stderr: $stderr"
        store_is_empty
        # a truncated archive fails as such
        hostile trunc "add('bin/f', b'y' * 100000)"
        head -c 20000 "$BATS_TEST_TMPDIR/trunc.tar" >"$BATS_TEST_TMPDIR/trunc2.tar"
        sbx_expect 2 image import trunc "$BATS_TEST_TMPDIR/trunc2.tar"
        store_is_empty
}

@test "hostile: a manifest naming a missing or a mismatched blob fails, no image left" {
        # missing blob: copy the layout without the v1 layer blob
        cp -a "$fx/oci" "$BATS_TEST_TMPDIR/missing"
        local layer
        layer=$(python3 -c '
import json, sys, os
d = sys.argv[1]
idx = json.load(open(d + "/index.json"))
m = [x for x in idx["manifests"] if x["annotations"]["org.opencontainers.image.ref.name"] == "v1"][0]
man = json.load(open(d + "/blobs/sha256/" + m["digest"][7:]))
print(man["layers"][0]["digest"][7:])' "$BATS_TEST_TMPDIR/missing")
        rm "$BATS_TEST_TMPDIR/missing/blobs/sha256/$layer"
        sbx_expect 2 image import bb:v1 "$BATS_TEST_TMPDIR/missing"
        [[ $stderr == *"missing layer"* ]] || fail "stderr: $stderr"
        store_is_empty
        # mismatched blob: same name, other content (a valid gzip tar)
        cp -a "$fx/oci" "$BATS_TEST_TMPDIR/mismatch"
        tar -C "$fx/rootfs" -czf "$BATS_TEST_TMPDIR/mismatch/blobs/sha256/$layer" etc
        sbx_expect 2 image import bb:v1 "$BATS_TEST_TMPDIR/mismatch"
        [[ $stderr == *"does not match its digest"* ]] || fail "stderr: $stderr"
        store_is_empty
        # a blob replaced by a symlink to a host file is not followed
        cp -a "$fx/oci" "$BATS_TEST_TMPDIR/symblob"
        rm "$BATS_TEST_TMPDIR/symblob/blobs/sha256/$layer"
        ln -s /etc/passwd "$BATS_TEST_TMPDIR/symblob/blobs/sha256/$layer"
        sbx_expect 2 image import bb:v1 "$BATS_TEST_TMPDIR/symblob"
        store_is_empty
        # a tampered manifest (its digest in the index no longer matches)
        cp -a "$fx/oci" "$BATS_TEST_TMPDIR/tamper"
        python3 -c '
import json, sys
d = sys.argv[1]
idx = json.load(open(d + "/index.json"))
m = [x for x in idx["manifests"] if x["annotations"]["org.opencontainers.image.ref.name"] == "v1"][0]
p = d + "/blobs/sha256/" + m["digest"][7:]
man = json.load(open(p)); man["annotations"] = {"evil": "1"}
json.dump(man, open(p, "w"))' "$BATS_TEST_TMPDIR/tamper"
        sbx_expect 2 image import bb:v1 "$BATS_TEST_TMPDIR/tamper"
        [[ $stderr == *"does not match its digest"* ]] || fail "stderr: $stderr"
        store_is_empty
}

# layer_of DIR TAG: the hex digest of the first layer of the OCI layout DIR's image TAG.
layer_of() {
        python3 -c '
import json, sys
d, tag = sys.argv[1:]
idx = json.load(open(d + "/index.json"))
m = [x for x in idx["manifests"] if x["annotations"]["org.opencontainers.image.ref.name"] == tag][0]
man = json.load(open(d + "/blobs/sha256/" + m["digest"][7:]))
print(man["layers"][0]["digest"][7:])' "$1" "$2"
}

@test "hostile: a FIFO as the source, its index.json, a blob or a layer tar fails at once" {
        # an open of a FIFO blocks until a writer comes: with the store lock held, forever
        local sbx_call_timeout=20 d=$BATS_TEST_TMPDIR
        mkfifo "$d/fifo"
        sbx_expect 2 image import f:1 "$d/fifo"
        [[ $stderr == *"not a directory or a regular file"* ]] || fail "stderr: $stderr"
        cp -a "$fx/oci" "$d/index"
        rm "$d/index/index.json"
        mkfifo "$d/index/index.json"
        sbx_expect 2 image import f:1 "$d/index"
        [[ $stderr == *"'index.json' is not a regular file"* ]] || fail "stderr: $stderr"
        cp -a "$fx/oci" "$d/blob"
        local layer
        layer=$(layer_of "$d/blob" v1)
        rm "$d/blob/blobs/sha256/$layer"
        mkfifo "$d/blob/blobs/sha256/$layer"
        sbx_expect 2 image import bb:v1 "$d/blob"
        [[ $stderr == *"layer blob 'blobs/sha256/$layer' is not a regular file"* ]] ||
                fail "stderr: $stderr"
        mkdir "$d/docker"
        tar -C "$d/docker" -xf "$fx/docker.tar"
        local tar
        tar=$(cd "$d/docker" && ls -- */layer.tar | head -n1)
        rm "$d/docker/$tar"
        mkfifo "$d/docker/$tar"
        sbx_expect 2 image import bb:v1 "$d/docker"
        [[ $stderr == *"layer '$tar' is not a regular file"* ]] || fail "stderr: $stderr"
        store_is_empty
        # an import on the FIFO blob next to an rm: neither waits for the other
        sbx_ok image import bb:v1 "$fx/oci"
        timeout 20 "$SBX" image import other:v1 "$d/blob" 2>/dev/null &
        local pid=$! rc=0
        sbx_ok image rm bb:v1
        wait "$pid" || rc=$?
        [ "$rc" = 2 ] || fail "the import next to rm exited $rc (124: it hung)"
        store_is_empty
}

# mk_deep FILE DEPTH: a layer tar with a file DEPTH directories deep (d/d/.../d/f).
mk_deep() {
        python3 - "$1" "$2" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    p = ""
    for i in range(int(sys.argv[2])):
        p = p + ("/" if p else "") + "d"
        ti = tarfile.TarInfo(p); ti.type = tarfile.DIRTYPE; ti.mode = 0o755; t.addfile(ti)
    ti = tarfile.TarInfo(p + "/f"); ti.size = 5; t.addfile(ti, io.BytesIO(b"deep\n"))
EOF
}

@test "deep trees: a layer 1,500 directories deep is imported and removed with 256 fds" {
        mk_deep "$BATS_TEST_TMPDIR/deep.tar" 1500
        # one open directory per level (the old removal) needs 1,500 fds
        _expect 0 prlimit --nofile=256 -- "$SBX" image import deep "$BATS_TEST_TMPDIR/deep.tar"
        local layer f
        layer=$(find "$store/layers" -mindepth 1 -maxdepth 1 -type d)
        f=$layer/$(printf 'd/%.0s' $(seq 1500))f
        [ "$(cat "$f")" = deep ] || fail "the deep file is not in the layer"
        _expect 0 prlimit --nofile=256 -- "$SBX" image rm deep
        store_is_empty
        # a removal that fails says so (a mount point in the layer: rmdir is EBUSY)
        sbx_ok image import deep "$BATS_TEST_TMPDIR/deep.tar"
        layer=$(find "$store/layers" -mindepth 1 -maxdepth 1 -type d)
        _expect 1 unshare -m sh -c 'mount --make-rprivate / && mount -t tmpfs none "$1/d/d" && exec "$2" image rm deep' sh "$layer" "$SBX"
        [[ $stderr == *"removed the tag 'deep:latest', but failed to remove"* ]] ||
                fail "stderr: $stderr"
        [ -n "$(ls -A "$store/tmp")" ] || fail "nothing left behind: the failure is not real"
        # the next import sweeps what was left
        sbx_ok image import bb:v1 "$fx/oci"
        [ -z "$(ls -A "$store/tmp")" ] || fail "tmp/ not swept: $(ls -A "$store/tmp")"
        sbx_ok image rm bb:v1
        store_is_empty
}

# ---- packages and setup -------------------------------------------------------------------

# tiny_wheel DIR: the pure-Python wheel "sbxtiny" 1.0 (wheel.bash), readable by the sandbox.
tiny_wheel() {
        mkdir -p "$1"
        mk_wheel "$1" sbxtiny 1.0
        chmod -R a+rX "$1"
}

need_pip() {
        # the sessions run the host base's /usr/bin/python3, whatever python3 is first in PATH
        /usr/bin/python3 -m pip --version >/dev/null 2>&1 || skip "python3-pip is not installed (scripts/bootstrap)"
}

@test "packages: --package and [sandbox] packages install from a mounted wheel dir before create returns" {
        need_pip
        public_dir
        tiny_wheel "$pubdir/wheels"
        local wh=(--mount "$pubdir/wheels:/wheels:ro" --env PIP_NO_INDEX=1 --env PIP_FIND_LINKS=/wheels)
        new_session "${wh[@]}" --package sbxtiny
        sbx_ok exec "$sid" python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'
        [ "$output" = 42 ] || fail "got '$output'"
        sbx_ok destroy "$sid"
        printf '[sandbox]\npackages = sbxtiny\nsetup = python3 -c "import sbxtiny" && echo ok > /workspace/setup-ran\n' \
                >"$BATS_TEST_TMPDIR/p.ini"
        sbx_ok run --config "$BATS_TEST_TMPDIR/p.ini" "${wh[@]}" -- cat /workspace/setup-ran
        [ "$output" = ok ] || fail "got '$output'"
}

@test "packages and setup: a failure fails create with the installer's output and leaves nothing" {
        need_pip
        sbx_expect 1 create --env PIP_NO_INDEX=1 --package sbx-no-such-package
        [[ $stderr == *"No matching distribution"* ]] || fail "stderr: $stderr"
        [[ $stderr == *"pip install"* ]] || fail "stderr: $stderr"
        [ -z "$(ls -A "$SBX_RUNTIME_DIR" | grep '^sb_')" ] || fail "a session dir is left"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a session is left: $output"
        printf '[sandbox]\nsetup = echo setup-says-no; exit 3\n' >"$BATS_TEST_TMPDIR/s.ini"
        sbx_expect 1 create --json --config "$BATS_TEST_TMPDIR/s.ini"
        json_doc
        [[ $(json .error.message) == *"setup command failed (exit 3)"*"setup-says-no"* ]] ||
                fail "json: $output"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a session is left: $output"
        # the setup's timeout is the session's exec timeout
        printf '[sandbox]\nsetup = sleep 30\ntimeout = 1s\n' >"$BATS_TEST_TMPDIR/t.ini"
        sbx_expect 1 create --config "$BATS_TEST_TMPDIR/t.ini"
        [[ $stderr == *"timed out"* ]] || fail "stderr: $stderr"
        sbx_ok list --quiet
        [ -z "$output" ] || fail "a session is left: $output"
}

# ---- unprivileged -------------------------------------------------------------------------

@test "user: import into the user's own store, run with whiteouts, rm" {
        setup_users
        setup_sbx_user
        public_dir
        local home=$users_base/$test_user/$BATS_TEST_NUMBER/home
        user_sbx_expect 0 image import bb:v2 "$fx/oci"
        [ -d "$home/.local/share/sbx/layers" ] || fail "no store in the user's data dir"
        [ "$(stat -c %U "$home/.local/share/sbx")" = "$test_user" ] || fail "store owner"
        user_sbx_expect 0 run --image bb:v2 -- sh -c 'id -u; cat /data/a; echo $(ls /data) $(ls /opq); test -e /gone || echo no-gone'
        [ "$output" = "$(printf '0\nhello\na new\nno-gone')" ] || fail "got '$output'"
        user_sbx_expect 0 run --image bb:v2 -- sh -c 'echo w > /data/a && cat /data/a'
        [ "$output" = w ] || fail "got '$output'"
        # a 0555 directory (as Fedora's /usr/bin) is filled by the entries after it
        python3 - "$pubdir/ro.tar" <<'EOF2'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    d = tarfile.TarInfo("ro"); d.type = tarfile.DIRTYPE; d.mode = 0o555; t.addfile(d)
    f = tarfile.TarInfo("ro/f"); f.size = 3; t.addfile(f, io.BytesIO(b"ok\n"))
EOF2
        chmod 0644 "$pubdir/ro.tar"
        user_sbx_expect 0 image import ro "$pubdir/ro.tar"
        user_sbx_expect 0 image rm ro
        user_sbx_expect 0 image rm bb:v2
        [ -z "$(ls -A "$home/.local/share/sbx/layers")" ] || fail "layers left"
        # packages for a user's session on the host base (pip falls back to the user site)
        if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
                tiny_wheel "$pubdir/wheels"
                user_sbx_expect 0 run --mount "$pubdir/wheels:/wheels:ro" --env PIP_NO_INDEX=1 \
                        --env PIP_FIND_LINKS=/wheels --package sbxtiny -- \
                        python3 -c 'import sbxtiny; print(sbxtiny.VALUE)'
                [ "$output" = 42 ] || fail "user package: '$output'"
        fi
        teardown_users
}
