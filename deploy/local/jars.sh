# Sourced by deploy/local/cassandra: the pinned jars (fetched by Maven from deploy/local/pom.xml, once per pom
# change), the Java check and the JVM options. Uses the launcher's HERE, LIB, STATE and fail.

pom_hash() { sha256sum "$HERE/pom.xml" | cut -d' ' -f1; }

fetch_jars() {
  if [[ -f $LIB/.pom.sha256 && $(cat "$LIB/.pom.sha256") == "$(pom_hash)" ]]; then
    return 0
  fi
  command -v mvn >/dev/null || fail "Maven (mvn) is needed to fetch Cassandra's jars: apt-get install maven"
  echo "Fetching Apache Cassandra jars (pinned in deploy/local/pom.xml) into $LIB ..."
  rm -rf "$LIB"
  mkdir -p "$LIB" "$STATE"
  if ! mvn -q -B -Dstyle.color=never -f "$HERE/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$LIB" >"$STATE/mvn.log" 2>&1; then
    tail -n 30 "$STATE/mvn.log" >&2
    fail "Maven could not fetch the jars (log: $STATE/mvn.log)"
  fi
  pom_hash >"$LIB/.pom.sha256"
}

cassandra_version() { basename "$(ls "$LIB"/cassandra-all-*.jar 2>/dev/null)" .jar | sed 's/^cassandra-all-//'; }

check_java() {
  command -v java >/dev/null || fail "Java 17 is needed: apt-get install openjdk-17-jdk-headless"
  local v
  v=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  [[ $v == 11 || $v == 17 ]] || fail "Cassandra 5.0 runs on Java 11 or 17; 'java' here is $v"
}

jvm_options() {
  grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$HERE/conf/jvm17-server.options"
}
