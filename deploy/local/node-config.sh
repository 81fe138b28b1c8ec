# Sourced by deploy/local/cassandra: a node's conf folder from conf/cassandra.yaml.template and the launcher's
# settings (CASSANDRA_CLUSTER_NAME, _SEEDS, _DC/_RACK, _COMMITLOG_DIR, _COMMITLOG_SYNC, _CLIENT_TLS_DIR, _AUTH). Uses
# the launcher's NODE_DIR, IP, LOGDIR, AUTH_MARK, HERE and fail.

render_config() {
  local conf=$NODE_DIR/conf commitlog=${CASSANDRA_COMMITLOG_DIR:-$NODE_DIR/commitlog}
  mkdir -p "$conf" "$NODE_DIR"/{data,saved_caches,hints,cdc_raw} "$commitlog" "$LOGDIR"
  sed -e "s|@CLUSTER_NAME@|${CASSANDRA_CLUSTER_NAME:-telemetry-local}|" \
      -e "s|@COMMITLOG_DIR@|$commitlog|" \
      -e "s|@NODE_DIR@|$NODE_DIR|g" \
      -e "s|@NODE_IP@|$IP|g" \
      -e "s|@SEEDS@|${CASSANDRA_SEEDS:-127.0.0.1}|" \
      "$HERE/conf/cassandra.yaml.template" >"$conf/cassandra.yaml"
  printf 'dc=%s\nrack=%s\n' "${CASSANDRA_DC:-datacenter1}" "${CASSANDRA_RACK:-rack1}" \
    >"$conf/cassandra-rackdc.properties"
  cp "$HERE/conf/logback.xml" "$conf/logback.xml"
  render_commitlog_sync "$conf"
  render_client_tls "$conf"
  render_auth "$conf"
}

# CASSANDRA_COMMITLOG_SYNC=periodic: Cassandra's own default (ack at once, fsync every 10 s) in place of the
# template's batch, to measure what batch is for (gateway/contract/guarantees.md); no node of the project runs so.
render_commitlog_sync() {
  local conf=$1 sync=${CASSANDRA_COMMITLOG_SYNC:-batch}
  case $sync in
    batch) ;;
    periodic) sed -i -e 's|^commitlog_sync: batch$|commitlog_sync: periodic\ncommitlog_sync_period: 10000ms|' \
                "$conf/cassandra.yaml" ;;
    *) fail "CASSANDRA_COMMITLOG_SYNC is batch or periodic, not '$sync'" ;;
  esac
}

render_auth() {
  local conf=$1 auth=${CASSANDRA_AUTH:-0}
  rm -f "$AUTH_MARK"
  [[ $auth == 0 || $auth == 1 ]] || fail "CASSANDRA_AUTH is 1 or 0, not '$auth'"
  [[ $auth == 1 ]] || return 0
  cat >>"$conf/cassandra.yaml" <<YAML

# CASSANDRA_AUTH=1: every client logs in, and may do only what its role was granted.
authenticator:
  class_name: PasswordAuthenticator
authorizer:
  class_name: CassandraAuthorizer
role_manager:
  class_name: CassandraRoleManager
# Logins read the role at LOCAL_ONE (Cassandra 5.0 defaults to LOCAL_QUORUM): with a quorum of replicas down a
# client could not log in again, so a gateway's reconnect failed as "unauthorized" instead of its writes failing
# as "unavailable", and it had to log in anew before it could write once the quorum was back. system_auth is
# replicated to every data centre's nodes and repaired (deploy/cluster/up); a role dropped a moment ago may still
# log in on a replica that has not heard of it yet.
auth_read_consistency_level: LOCAL_ONE
YAML
  touch "$AUTH_MARK"
}

# Client-to-node TLS from CASSANDRA_CLIENT_TLS_DIR: the PEM files are copied into the node's conf/tls (the node reads
# them there, and status and cqlsh find them there later) and client_encryption_options go into cassandra.yaml.
render_client_tls() {
  local conf=$1 dir=${CASSANDRA_CLIENT_TLS_DIR:-} require=${CASSANDRA_CLIENT_TLS_REQUIRE_CLIENT_AUTH:-false}
  rm -rf "$conf/tls"
  [[ -n $dir ]] || return 0
  [[ $require == true || $require == false ]] ||
    fail "CASSANDRA_CLIENT_TLS_REQUIRE_CLIENT_AUTH is true or false, not '$require'"
  local file
  for file in ca.crt node.crt node.key; do
    [[ -r $dir/$file ]] || fail "CASSANDRA_CLIENT_TLS_DIR=$dir has no readable $file"
  done
  if [[ -e $dir/client.crt || -e $dir/client.key ]] && ! [[ -r $dir/client.crt && -r $dir/client.key ]]; then
    fail "CASSANDRA_CLIENT_TLS_DIR=$dir: client.crt and client.key go together"
  fi
  if [[ $require == true && ! -r $dir/client.crt ]]; then
    fail "CASSANDRA_CLIENT_TLS_REQUIRE_CLIENT_AUTH=true needs client.crt and client.key in $dir (for the CQL check)"
  fi
  mkdir -m 700 "$conf/tls"
  cp "$dir/ca.crt" "$conf/tls/ca.crt"
  # Cassandra's PEM keystore is one file: the private key, then the certificate chain.
  cat "$dir/node.key" "$dir/node.crt" >"$conf/tls/node-keystore.pem"
  if [[ -r $dir/client.crt ]]; then
    cp "$dir/client.crt" "$dir/client.key" "$conf/tls/"
  fi
  cat >>"$conf/cassandra.yaml" <<YAML

# From CASSANDRA_CLIENT_TLS_DIR=$dir: CQL over TLS only.
client_encryption_options:
  enabled: true
  optional: false
  ssl_context_factory:
    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory
  keystore: $conf/tls/node-keystore.pem
  truststore: $conf/tls/ca.crt
  require_client_auth: $require
YAML
}
