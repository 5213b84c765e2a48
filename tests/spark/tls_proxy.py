"""tls_proxy.py — a gRPC server with TLS and a bearer token in front of a
plaintext Spark Connect server, for tests/spark/grpc_test.c.

usage: tls_proxy.py CERT_DIR TOKEN UPSTREAM (e.g. /tmp/x secret 127.0.0.1:15002)

Makes a self-signed certificate for 127.0.0.1 (CN and IP SAN) in CERT_DIR
with the openssl command line, listens on 127.0.0.1 (a free port), prints
"PORT <n>" on stdout once it serves, and forwards every call as raw bytes to
UPSTREAM: ExecutePlan and ReattachExecute as unary-stream, every other method
as unary-unary.  A call without "authorization: Bearer TOKEN" ends with
UNAUTHENTICATED.  It exits when its stdin closes (the test that started it
has ended, however it ended) or on SIGTERM.

Runs with the Spark venv's python (scripts/spark-local python), which has
grpcio because pyspark[connect] needs it.
"""
import os
import signal
import subprocess
import sys
import threading

# grpc logs every failed handshake (the test makes some on purpose) at INFO.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import grpc  # noqa: E402
from concurrent import futures  # noqa: E402

STREAMING = {"ExecutePlan", "ReattachExecute"}
BIG = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]


def make_cert(cert_dir):
    key, cert = os.path.join(cert_dir, "key.pem"), os.path.join(cert_dir, "cert.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(key, "rb") as k, open(cert, "rb") as c:
        return k.read(), c.read()


class Forward(grpc.GenericRpcHandler):
    def __init__(self, token, channel):
        self.want = "Bearer " + token
        self.channel = channel

    def service(self, details):
        method = details.method
        meta = dict(details.invocation_metadata)
        if meta.get("authorization") != self.want:
            def deny(request, context):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
            if method.rsplit("/", 1)[-1] in STREAMING:
                return grpc.unary_stream_rpc_method_handler(deny)
            return grpc.unary_unary_rpc_method_handler(deny)
        # Forward everything but the token and the HTTP/2 pseudo headers.
        fwd = [(k, v) for k, v in details.invocation_metadata
               if k not in ("authorization", "user-agent") and not k.startswith(":")]
        if method.rsplit("/", 1)[-1] in STREAMING:
            up = self.channel.unary_stream(method)

            def stream(request, context):
                try:
                    for msg in up(request, metadata=fwd, timeout=context.time_remaining()):
                        yield msg
                except grpc.RpcError as e:
                    context.abort(e.code(), e.details() or "")
            return grpc.unary_stream_rpc_method_handler(stream)
        up1 = self.channel.unary_unary(method)

        def unary(request, context):
            try:
                return up1(request, metadata=fwd, timeout=context.time_remaining())
            except grpc.RpcError as e:
                context.abort(e.code(), e.details() or "")
        return grpc.unary_unary_rpc_method_handler(unary)


def main():
    cert_dir, token, upstream = sys.argv[1:4]
    key, cert = make_cert(cert_dir)
    channel = grpc.insecure_channel(upstream, options=BIG)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=BIG,
                         handlers=[Forward(token, channel)])
    port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([(key, cert)]))
    server.start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())

    def watch_stdin():
        sys.stdin.buffer.read()
        done.set()
    threading.Thread(target=watch_stdin, daemon=True).start()
    print("PORT %d" % port, flush=True)
    done.wait()
    server.stop(0)
    os._exit(0)


if __name__ == "__main__":
    main()
