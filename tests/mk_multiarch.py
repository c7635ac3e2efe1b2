#!/usr/bin/env python3
"""mk_multiarch.py LAYOUT TAG NEWTAG: add to an OCI layout an index NEWTAG whose entries are
TAG's manifest for linux/amd64 and a copy of it for linux/arm64 (its config says arm64, so its
digest differs): a multi-arch image as registries serve them, for tests/710-pull.bats."""
import hashlib, json, os, sys

layout, tag, newtag = sys.argv[1:4]
blobs = os.path.join(layout, "blobs", "sha256")


def put(data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, d), "wb") as f:
        f.write(data)
    return "sha256:" + d, len(data)


def get(digest):
    return open(os.path.join(blobs, digest.split(":")[1]), "rb").read()


index = json.load(open(os.path.join(layout, "index.json")))
desc = next(m for m in index["manifests"]
            if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag)
man = json.loads(get(desc["digest"]))
entries = []
for arch in ("arm64", "amd64"):
    cfg = json.loads(get(man["config"]["digest"]))
    cfg["architecture"] = arch
    cd, cs = put(json.dumps(cfg).encode())
    m = dict(man, config=dict(man["config"], digest=cd, size=cs))
    md, ms = put(json.dumps(m).encode())
    entries.append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md,
                    "size": ms, "platform": {"os": "linux", "architecture": arch}})
    print(arch, md)
idx = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
       "manifests": entries}
idd, ids = put(json.dumps(idx).encode())
index["manifests"].append({"mediaType": "application/vnd.oci.image.index.v1+json", "digest": idd,
                           "size": ids,
                           "annotations": {"org.opencontainers.image.ref.name": newtag}})
json.dump(index, open(os.path.join(layout, "index.json"), "w"))
