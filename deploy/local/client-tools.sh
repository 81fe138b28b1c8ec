# Sourced by deploy/local/cassandra: cqlsh and nodetool against the node. Uses the launcher's NODE_DIR, STATE,
# ADMIN_FILE, ROOT, HERE, LIB, JMX_PORT, PYTHON and IP, and its auth_on, need_python, check_java, fetch_jars and
# jvm_options.

cmd_cqlsh() {
  need_python
  local tls=$NODE_DIR/conf/tls
  local -a login=()
  if auth_on && [[ -f $ADMIN_FILE ]]; then
    # cqlsh's own credentials file (never -u/-p, which ps shows), 0600 as cqlsh insists.
    local creds=$NODE_DIR/conf/cqlsh-credentials
    (umask 077 && "$PYTHON" -c 'import sys; from telemetry_cassandra import read_credentials_file as r
u, p = r(sys.argv[1]); print(f"[PlainTextAuthProvider]\nusername = {u}\npassword = {p}")' "$ADMIN_FILE" >"$creds")
    login=(--credentials "$creds")
  fi
  if [[ -f $tls/ca.crt ]]; then
    # A node started with CASSANDRA_CLIENT_TLS_DIR: cqlsh over TLS, verifying the node, with the client certificate.
    {
      printf '[connection]\nssl = true\n[ssl]\ncertfile = %s\nvalidate = true\n' "$tls/ca.crt"
      if [[ -f $tls/client.crt ]]; then
        printf 'usercert = %s\nuserkey = %s\n' "$tls/client.crt" "$tls/client.key"
      fi
    } >"$tls/cqlshrc"
    exec "$ROOT/.venv/bin/cqlsh" --cqlshrc "$tls/cqlshrc" "${login[@]}" "$IP" 9042 "$@"
  fi
  exec "$ROOT/.venv/bin/cqlsh" "${login[@]}" "$IP" 9042 "$@"
}

cmd_nodetool() {
  check_java
  fetch_jars >&2
  local -a opts
  mapfile -t opts < <(jvm_options | grep -v -e AlwaysPreTouch -e UseG1GC -e MaxGCPauseMillis)
  exec java "${opts[@]}" -Xmx256m -Dlogback.configurationFile="$HERE/conf/logback-tools.xml" \
    -cp "$LIB/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$JMX_PORT" "$@"
}
