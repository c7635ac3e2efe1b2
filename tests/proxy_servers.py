#!/usr/bin/env python3
# The test hosts of tests/600-proxy.bats and bench/proxy.sh, run inside the test's own network
# namespace: HTTP on 80 and 8080, HTTPS on 443 (the given self-signed certificate), a TCP
# echo on 7. Files come from ROOT; GET /headers answers with the request head the server
# received (to see what the proxy passed on). Prints "ready" when every port listens.
#
#   proxy_servers.py ROOT CERT KEY
import http.server
import socketserver
import ssl
import sys
import threading

root, cert, key = sys.argv[1:4]


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)

    def log_message(self, *a):
        pass

    def copyfile(self, source, outputfile):
        # sendfile(2): the server costs little CPU, so bench/proxy.sh measures the proxy
        outputfile.flush()
        self.connection.sendfile(source)

    def do_GET(self):
        if self.path == "/headers":
            body = (self.requestline + "\n" + str(self.headers)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            data = self.request.recv(65536)
            if not data:
                return
            self.request.sendall(data)


class EchoServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


servers = [Server(("0.0.0.0", 80), Handler), Server(("0.0.0.0", 8080), Handler)]
tls = Server(("0.0.0.0", 443), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
servers += [tls, EchoServer(("0.0.0.0", 7), Echo)]
for s in servers:
    threading.Thread(target=s.serve_forever, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
