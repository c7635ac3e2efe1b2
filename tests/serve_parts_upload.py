#!/usr/bin/env python3
"""POST /files/upload with N metadata/file pairs (files /workspace/PREFIX-I). With "hold", all
but the body's last bytes are sent and the connection is held open (the upload still
arriving) until the process is killed; else the status is printed.

usage: serve_parts_upload.py BASE_URL TOKEN_HEADER PREFIX N hold|finish
"""
import json
import socket
import sys
import time
from urllib.parse import urlsplit

base, token, prefix, n, mode = sys.argv[1:6]
url = urlsplit(base)
b = "sbx-parts-boundary"
body = b""
for i in range(int(n)):
    meta = json.dumps({"path": f"/workspace/{prefix}-{i}"})
    body += (f'--{b}\r\nContent-Disposition: form-data; name="metadata"; filename="metadata"'
             f'\r\nContent-Type: application/json\r\n\r\n{meta}\r\n'
             f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="f{i}"'
             f'\r\nContent-Type: application/octet-stream\r\n\r\nfile {i}\r\n').encode()
body += f"--{b}--\r\n".encode()
req = (f"POST {url.path}/files/upload HTTP/1.1\r\nHost: {url.netloc}\r\n{token}\r\n"
       f"Content-Type: multipart/form-data; boundary={b}\r\nContent-Length: {len(body)}\r\n"
       "Connection: close\r\n\r\n").encode()
s = socket.create_connection((url.hostname, url.port))
if mode == "hold":
    s.sendall(req + body[:-10])
    print("held", flush=True)
    while True:
        time.sleep(60)
s.sendall(req + body)
resp = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    resp += chunk
print(resp.split(b" ", 2)[1].decode())
