#!/usr/bin/env python3
"""POST /files/upload over a raw socket, the ways curl cannot send it.

  serve_upload_raw.py BASE_URL TOKEN_HEADER split PATH PART K DATA
      one metadata/file pair (PATH, DATA), the body sent in two pieces, the first ending K
      bytes into the value of the part named PART ("metadata" or "file"), with a pause
      between them so that the server reads them apart; prints the HTTP status
  serve_upload_raw.py BASE_URL TOKEN_HEADER grouped PREFIX K
      the metadata of PREFIX-0 and PREFIX-1, then their files, the first empty, both with the
      same name, file name and type; split K bytes into the second file's value (K < 0: sent
      whole); prints the HTTP status
  serve_upload_raw.py BASE_URL TOKEN_HEADER parts PREFIX N hold|finish
      N pairs (files /workspace/PREFIX-I); "hold" sends all but the body's last bytes and
      holds the connection open until killed, "finish" prints the HTTP status
  serve_upload_raw.py BASE_URL TOKEN_HEADER big PREFIX SIZE hold|finish
      one pair, /workspace/PREFIX of SIZE bytes; hold or finish as for parts
"""
import json
import socket
import sys
import time
from urllib.parse import urlsplit

B = "sbx-raw-boundary"


def pair(path, data):
    meta = (f'--{B}\r\nContent-Disposition: form-data; name="metadata"; filename="metadata"'
            f'\r\nContent-Type: application/json\r\n\r\n{json.dumps({"path": path})}\r\n')
    head = (f'--{B}\r\nContent-Disposition: form-data; name="file"; filename="f"'
            '\r\nContent-Type: application/octet-stream\r\n\r\n')
    return meta.encode(), head.encode(), f"{data}\r\n".encode()


def connect(base, token, body):
    url = urlsplit(base)
    s = socket.create_connection((url.hostname, url.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    req = (f"POST {url.path}/files/upload HTTP/1.1\r\nHost: {url.netloc}\r\n{token}\r\n"
           f"Content-Type: multipart/form-data; boundary={B}\r\n"
           f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return s, req


def status(s):
    resp = b""
    while chunk := s.recv(65536):
        resp += chunk
    return resp.split(b" ", 2)[1].decode()


def send_split(base, token, body, cut):
    s, req = connect(base, token, body)
    if cut < 0:
        s.sendall(req + body)
    else:
        s.sendall(req + body[:cut])
        time.sleep(0.2)
        s.sendall(body[cut:])
    print(status(s))


def main():
    base, token, mode = sys.argv[1:4]
    end = f"--{B}--\r\n".encode()
    if mode == "split":
        path, part, k, data = sys.argv[4:8]
        meta, head, value = pair(path, data)
        body = meta + head + value + end
        value_at = meta.index(b"\r\n\r\n") + 4 if part == "metadata" else len(meta) + len(head)
        send_split(base, token, body, value_at + int(k))
        return
    if mode == "grouped":
        prefix, k = sys.argv[4:6]
        meta0, head, _ = pair(f"/workspace/{prefix}-0", "")
        meta1, _, _ = pair(f"/workspace/{prefix}-1", "")
        body = meta0 + meta1 + head + b"\r\n" + head
        second_at = len(body)
        body += b"second\r\n" + end
        send_split(base, token, body, second_at + int(k) if int(k) >= 0 else -1)
        return
    prefix, n, how = sys.argv[4:7]
    if mode == "big":
        body = b"".join(pair(f"/workspace/{prefix}", "x" * int(n))) + end
    else:
        body = b"".join(b"".join(pair(f"/workspace/{prefix}-{i}", f"file {i}"))
                        for i in range(int(n))) + end
    s, req = connect(base, token, body)
    if how == "hold":
        s.sendall(req + body[:-10])
        while True:
            time.sleep(60)
    s.sendall(req + body)
    print(status(s))


main()
