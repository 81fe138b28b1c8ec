"""Exit 0 and print the release version when a CQL query on HOST PORT succeeds; exit 3 when the node answers but
refuses the credentials (or asks for some); exit 1 otherwise.

With --tls-ca (and optionally --tls-cert/--tls-key) the query goes over TLS, verifying the node against the CA.
Credentials: TELEMETRY_CASSANDRA_USERNAME/_PASSWORD or _CREDENTIALS_FILE (the launcher passes admin.toml)."""

import argparse
import logging
import os
import sys

from cassandra.policies import WhiteListRoundRobinPolicy
from telemetry_cassandra import connect_cluster, login_refused, settings_from_env

logging.disable(logging.WARNING)  # a node that is still starting makes the driver log connection errors
parser = argparse.ArgumentParser()
parser.add_argument("host")
parser.add_argument("port", type=int)
parser.add_argument("--tls-ca")
parser.add_argument("--tls-cert")
parser.add_argument("--tls-key")
args = parser.parse_args()
credentials = settings_from_env(os.environ)
cluster = connect_cluster([args.host], port=args.port, username=credentials["username"],
                          password=credentials["password"], tls_ca=args.tls_ca, tls_cert=args.tls_cert,
                          tls_key=args.tls_key, connect_timeout=10, control_connection_timeout=10,
                          load_balancing_policy=WhiteListRoundRobinPolicy([args.host]),
                          # One query needs no schema or token map: a node busy with a backlog of writes (after a
                          # crash) answers it long before it answers the dozen queries that read them.
                          schema_metadata_enabled=False, token_metadata_enabled=False)
try:
    session = cluster.connect()
    print(session.execute("SELECT release_version FROM system.local", timeout=10).one().release_version)
except Exception as error:  # any other failure means "not answering yet"
    print(f"{type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(3 if login_refused(error) else 1)
finally:
    cluster.shutdown()
