#!/usr/bin/env python3
"""POST /files/upload with the body sent in two pieces, the first ending SPLIT bytes into the
value of the part named PART ("metadata" or "file"), with a pause between the pieces so that
the server reads them apart. Prints the HTTP status.

usage: serve_split_upload.py BASE_URL TOKEN_HEADER PATH PART SPLIT DATA
"""
import json
import socket
import sys
import time
from urllib.parse import urlsplit

base, token, path, part, split, data = sys.argv[1:7]
split = int(split)
url = urlsplit(base)
b = "sbx-split-boundary"
meta = json.dumps({"path": path})
head_meta = (f'--{b}\r\nContent-Disposition: form-data; name="metadata"; filename="metadata"'
             '\r\nContent-Type: application/json\r\n\r\n')
head_file = (f'\r\n--{b}\r\nContent-Disposition: form-data; name="file"; filename="f"'
             '\r\nContent-Type: application/octet-stream\r\n\r\n')
body = (head_meta + meta + head_file).encode() + data.encode() + f"\r\n--{b}--\r\n".encode()
start = len(head_meta) if part == "metadata" else len(head_meta) + len(meta) + len(head_file)
cut = start + split
req = (f"POST {url.path}/files/upload HTTP/1.1\r\nHost: {url.netloc}\r\n{token}\r\n"
       f"Content-Type: multipart/form-data; boundary={b}\r\nContent-Length: {len(body)}\r\n"
       "Connection: close\r\n\r\n").encode()
s = socket.create_connection((url.hostname, url.port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.sendall(req + body[:cut])
time.sleep(0.2)
s.sendall(body[cut:])
resp = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    resp += chunk
print(resp.split(b" ", 2)[1].decode())
