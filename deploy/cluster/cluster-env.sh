# Sourced by deploy/cluster/*: where the local cluster lives and how its parts are reached.
#
# Settings (environment):
#   CLUSTER_STATE_DIR       default <repo>/.state/cluster: the nodes' data and logs (cassandra/nodeN), Spark's (spark/)
#   CASSANDRA_HEAP          per node, default 1G (3 nodes ~1.6 GB RSS each, with Spark well inside 24 GB)
#   CLUSTER_RING_DELAY_MS   how long a node joining a running ring listens to gossip first, default 5000
#   SPARK_WORKER_CORES / SPARK_WORKER_MEMORY   the worker's share, default 2 / 2g
#   CLUSTER_AUTH            1 (default): nodes authenticate and authorize (CASSANDRA_AUTH=1); the admin's
#                           credentials are in $CLUSTER_STATE_DIR/cassandra/admin.toml. 0: no authentication.
# The nodes are deploy/local/cassandra --node N (127.0.0.N, JMX on 7N99) with this cluster's state, name and seeds.

CLUSTER_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAUNCHER=$CLUSTER_ROOT/deploy/local/cassandra
PYTHON=$CLUSTER_ROOT/.venv/bin/python
export CLUSTER_STATE_DIR=${CLUSTER_STATE_DIR:-$CLUSTER_ROOT/.state/cluster}
export CASSANDRA_STATE_DIR=$CLUSTER_STATE_DIR/cassandra
# One copy of the jars for the single node and the cluster.
export CASSANDRA_LIB_DIR=${CASSANDRA_LIB_DIR:-$CLUSTER_ROOT/.state/cassandra/lib}
export CASSANDRA_SEEDS=127.0.0.1
export CASSANDRA_CLUSTER_NAME=telemetry-cluster
export CASSANDRA_DC=datacenter1
export CASSANDRA_AUTH=${CLUSTER_AUTH:-1}
# Cassandra's own delays, which the launcher shortens for a node that is its own only seed (node 1 here): the
# default superuser 10 s after CQL opens, once the node sees the whole ring; a drained node's 2 s for its peers to
# hear of it.
CASSANDRA_DELAYS="-Dcassandra.superuser_setup_delay_ms=10000 -Dcassandra.shutdown_announce_in_ms=2000"
[[ ${CASSANDRA_JVM_EXTRA:-} == *"$CASSANDRA_DELAYS"* ]] || CASSANDRA_JVM_EXTRA="$CASSANDRA_DELAYS ${CASSANDRA_JVM_EXTRA:-}"
export CASSANDRA_JVM_EXTRA
CLUSTER_ADMIN_FILE=$CASSANDRA_STATE_DIR/admin.toml
CLUSTER_DC=datacenter1
SPARK_STATE=$CLUSTER_STATE_DIR/spark
SPARK_MASTER_PORT=7077
SPARK_MASTER_UI_PORT=8080
SPARK_WORKER_UI_PORT=8081
SPARK_MASTER_URL=spark://127.0.0.1:$SPARK_MASTER_PORT

cluster_say() { echo "cluster: $*"; }
cluster_fail() { echo "cluster: $*" >&2; exit 1; }

# The node numbers that have a folder in the cluster's state, in order.
cluster_nodes() {
  local dir
  for dir in "$CASSANDRA_STATE_DIR"/node*; do
    [[ -d $dir ]] && echo "${dir##*/node}"
  done | sort -n
}

# The launcher for node N of this cluster. A node started while another one is up joins a running ring: it
# listens to gossip for CLUSTER_RING_DELAY_MS first (the first node of a new cluster has nobody to listen to).
# Only `start` asks the other nodes (a CQL query each).
node_cmd() {
  local node=$1
  shift
  local delay=1000 other
  for other in $([[ ${1:-} == start ]] && cluster_nodes); do
    if [[ $other != "$node" ]] && "$LAUNCHER" --node "$other" status >/dev/null 2>&1; then
      delay=${CLUSTER_RING_DELAY_MS:-5000}
      break
    fi
  done
  CASSANDRA_RING_DELAY_MS=$delay "$LAUNCHER" --node "$node" "$@"
}

# A command with the cluster's admin credentials (on a cluster that authenticates, once they exist), whatever the
# caller's say.
as_admin() {
  local -a vars=(TELEMETRY_CASSANDRA_USERNAME= TELEMETRY_CASSANDRA_PASSWORD= TELEMETRY_CASSANDRA_CREDENTIALS_FILE=)
  [[ $CASSANDRA_AUTH == 1 && -f $CLUSTER_ADMIN_FILE ]] &&
    vars+=("TELEMETRY_CASSANDRA_CREDENTIALS_FILE=$CLUSTER_ADMIN_FILE")
  env "${vars[@]}" "$@"
}

spark_home() { "$PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))'; }

# The PID in a Spark pidfile while it is still that daemon (the class name on its command line).
spark_pid() {
  local name=$1 class=$2 pid
  [[ -f $SPARK_STATE/$name.pid ]] || return 1
  pid=$(cat "$SPARK_STATE/$name.pid")
  [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -e "$class" || return 1
  echo "$pid"
}
