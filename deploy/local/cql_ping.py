"""Exit 0 and print the release version when a CQL query on HOST PORT succeeds; exit 1 otherwise.

With --tls-ca (and optionally --tls-cert/--tls-key) the query goes over TLS, verifying the node against the CA."""

import argparse
import logging
import ssl
import sys

from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy

logging.disable(logging.WARNING)  # a node that is still starting makes the driver log connection errors
parser = argparse.ArgumentParser()
parser.add_argument("host")
parser.add_argument("port", type=int)
parser.add_argument("--tls-ca")
parser.add_argument("--tls-cert")
parser.add_argument("--tls-key")
args = parser.parse_args()
ssl_context = None
if args.tls_ca:
    ssl_context = ssl.create_default_context(cafile=args.tls_ca)
    if args.tls_cert:
        ssl_context.load_cert_chain(args.tls_cert, args.tls_key)
cluster = Cluster([args.host], port=args.port, connect_timeout=3, control_connection_timeout=3,
                  load_balancing_policy=WhiteListRoundRobinPolicy([args.host]), protocol_version=5,
                  ssl_context=ssl_context)
try:
    session = cluster.connect()
    print(session.execute("SELECT release_version FROM system.local", timeout=5).one().release_version)
except Exception as error:  # any failure means "not answering yet"
    print(f"{type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(1)
finally:
    cluster.shutdown()
