"""Exit 0 and print the release version when a CQL query on HOST PORT succeeds; exit 1 otherwise."""

import logging
import sys

from cassandra.cluster import Cluster
from cassandra.policies import WhiteListRoundRobinPolicy

logging.disable(logging.WARNING)  # a node that is still starting makes the driver log connection errors
host, port = sys.argv[1], int(sys.argv[2])
cluster = Cluster([host], port=port, connect_timeout=3, control_connection_timeout=3,
                  load_balancing_policy=WhiteListRoundRobinPolicy([host]), protocol_version=5)
try:
    session = cluster.connect()
    print(session.execute("SELECT release_version FROM system.local", timeout=5).one().release_version)
except Exception as error:  # any failure means "not answering yet"
    print(f"{type(error).__name__}: {error}", file=sys.stderr)
    sys.exit(1)
finally:
    cluster.shutdown()
