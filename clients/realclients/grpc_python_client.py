"""One unary gRPC call with Python's grpcio (Debian python3-grpcio), its retries left to grpcio itself:
the client `faultline score --grpc` judges against the service config it was given.

    grpc_python_client.py URL PATH [--service-config FILE] [--key KEY] [--body TEXT] [--timeout S]

URL is faultline's base URL (http://127.0.0.1:PORT, the h2c port) and PATH the method's path
(/bank.Payments/Charge). With --service-config, grpcio enables retries and reads that JSON (its
retryPolicy, retryThrottling); without it grpcio retries nothing but what it may retry transparently.
--key sends `idempotency-key` metadata. The message is TEXT's bytes as they are: no protobuf stubs, since
faultline never decodes a message. Exit 0 on OK, 1 on any other status (printed), 2 on bad input.
"""

import argparse
import sys
from urllib.parse import urlsplit

try:
    import grpc
except ImportError:
    print("grpc_python_client: Python's grpcio is missing (apt-get install python3-grpcio)", file=sys.stderr)
    sys.exit(77)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("path")
    parser.add_argument("--service-config")
    parser.add_argument("--key")
    parser.add_argument("--body", default="")
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()

    where = urlsplit(args.url)
    if where.scheme != "http" or not where.hostname or not where.port:
        print(f"grpc_python_client: expected http://HOST:PORT, got {args.url}", file=sys.stderr)
        return 2
    options = []
    if args.service_config:
        with open(args.service_config, encoding="utf-8") as f:
            options = [("grpc.enable_retries", 1), ("grpc.service_config", f.read())]
    else:
        options = [("grpc.enable_retries", 0)]
    with grpc.insecure_channel(f"{where.hostname}:{where.port}", options=options) as channel:
        call = channel.unary_unary(args.path, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        metadata = [("idempotency-key", args.key)] if args.key else None
        try:
            call(args.body.encode(), timeout=args.timeout, metadata=metadata)
        except grpc.RpcError as e:
            print(f"{e.code().name}: {e.details()}")
            return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
