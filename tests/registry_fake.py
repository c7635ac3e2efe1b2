#!/usr/bin/env python3
"""A registry that misbehaves on purpose, for tests/710-pull.bats: it serves the images of an
OCI layout (distribution API v2, read side only) and, by --mode:
  token      every /v2/ request needs "Authorization: Bearer <token>"; /token hands one out,
             and with --user U:P only to a client that sends those credentials (Basic)
  tokenloop  as token, but /token itself answers 401 with the same challenge
  baddigest  a layer blob is sent with its last byte changed (same size, wrong digest)
  die        the first GET of each layer blob stops after half of it; Range requests are
             served (206) and logged to --log
Usage: registry_fake.py --layout DIR --port-file F [--mode M] [--user U:P] [--log F]"""
import argparse, base64, hashlib, json, os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--layout", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--mode", default="plain")
ap.add_argument("--user")
ap.add_argument("--log")
args = ap.parse_args()

blobs = os.path.join(args.layout, "blobs", "sha256")
index = json.load(open(os.path.join(args.layout, "index.json")))
tags = {}
for m in index["manifests"]:
    ref = m.get("annotations", {}).get("org.opencontainers.image.ref.name")
    if ref:
        tags[ref] = m["digest"]
layers = set()
for d in tags.values():
    man = json.load(open(os.path.join(blobs, d.split(":")[1])))
    for l in man.get("layers", []):
        layers.add(l["digest"])
died = set()
TOKEN = "t0k3n-" + hashlib.sha256(os.urandom(8)).hexdigest()[:16]


def log(line):
    if args.log:
        with open(args.log, "a") as f:
            f.write(line + "\n")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, code, body=b"", ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        if args.mode not in ("token", "tokenloop"):
            return True
        if self.headers.get("Authorization") == "Bearer " + TOKEN:
            return True
        realm = "http://127.0.0.1:%d/token" % self.server.server_address[1]
        self.send(401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', extra=[(
            "WWW-Authenticate", 'Bearer realm="%s",service="fake",scope="repository:test/x:pull"' % realm)])
        return False

    def do_GET(self):
        p = self.path
        log("GET %s range=%s auth=%s" % (p, self.headers.get("Range"), bool(self.headers.get("Authorization"))))
        if p.startswith("/token") and args.mode == "tokenloop":
            self.authorized()
            return
        if p.startswith("/token"):
            if args.user:
                want = "Basic " + base64.b64encode(args.user.encode()).decode()
                if self.headers.get("Authorization") != want:
                    return self.send(401, b"{}")
            return self.send(200, json.dumps({"token": TOKEN}).encode())
        if not p.startswith("/v2/"):
            return self.send(404)
        if not self.authorized():
            return
        parts = p.split("/")
        if len(parts) < 5:
            return self.send(200, b"{}")
        kind, ref = parts[-2], parts[-1]
        if kind == "manifests":
            digest = tags.get(ref, ref)
            path = os.path.join(blobs, digest.split(":")[-1])
            if not os.path.exists(path):
                return self.send(404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
            body = open(path, "rb").read()
            mt = json.loads(body).get("mediaType", "application/vnd.oci.image.manifest.v1+json")
            return self.send(200, body, mt)
        if kind == "blobs":
            path = os.path.join(blobs, ref.split(":")[-1])
            if not os.path.exists(path):
                return self.send(404)
            body = open(path, "rb").read()
            if args.mode == "baddigest" and ref in layers:
                body = body[:-1] + bytes([body[-1] ^ 1])
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes="):
                start = int(rng[6:].split("-")[0])
                part = body[start:]
                return self.send(206, part, "application/octet-stream", [
                    ("Content-Range", "bytes %d-%d/%d" % (start, len(body) - 1, len(body)))])
            if args.mode == "die" and ref in layers and ref not in died:
                died.add(ref)
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            return self.send(200, body, "application/octet-stream")
        return self.send(404)


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
