# Sourced by deploy/cluster/up: the Spark standalone master and one worker, from the pinned pyspark (pip's has no
# sbin start scripts). start_spark returns at once (the nodes start meanwhile); wait_spark waits for the worker to
# register. A daemon already running is left as it is.

MASTER=org.apache.spark.deploy.master.Master
WORKER=org.apache.spark.deploy.worker.Worker

start_daemon() { # name class args...
  local name=$1 class=$2
  shift 2
  if spark_pid "$name" "$class" >/dev/null; then
    cluster_say "spark $name is up"
    return 0
  fi
  local log=$SPARK_STATE/logs/$name.log
  [[ -f $log ]] && mv "$log" "$log.1" # the previous run's, for a look after a failure
  setsid "$SPARK_HOME/bin/spark-class" "$class" "$@" </dev/null >"$log" 2>&1 &
  echo $! >"$SPARK_STATE/$name.pid"
}

wait_log() { # name pattern class
  local started=$SECONDS
  until grep -q "$2" "$SPARK_STATE/logs/$1.log" 2>/dev/null; do
    ((SECONDS - started < 90)) || { tail -n 20 "$SPARK_STATE/logs/$1.log" >&2; cluster_fail "spark $1: no '$2' in 90 s"; }
    spark_pid "$1" "$3" >/dev/null || { tail -n 20 "$SPARK_STATE/logs/$1.log" >&2; cluster_fail "spark $1 exited"; }
    sleep 0.5
  done
}

start_spark() {
  SPARK_HOME=$(spark_home)
  export SPARK_HOME
  # The daemons and their web UIs bind to this address only: loopback.
  export SPARK_LOCAL_IP=127.0.0.1
  # Old applications' folders are removed from the worker's work dir (a week after they finished).
  export SPARK_WORKER_OPTS="-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.interval=3600 -Dspark.worker.cleanup.appDataTtl=604800"
  mkdir -p "$SPARK_STATE/work" "$SPARK_STATE/logs"
  start_daemon master $MASTER --host 127.0.0.1 --port "$SPARK_MASTER_PORT" --webui-port "$SPARK_MASTER_UI_PORT"
  # The worker once the master leads: one that finds no master retries only after several seconds.
  (
    wait_log master "I have been elected leader" $MASTER
    start_daemon worker $WORKER "$SPARK_MASTER_URL" --host 127.0.0.1 --webui-port "$SPARK_WORKER_UI_PORT" \
      --cores "${SPARK_WORKER_CORES:-2}" --memory "${SPARK_WORKER_MEMORY:-2g}" --work-dir "$SPARK_STATE/work"
  ) &
  SPARK_STARTER=$!
}

wait_spark() {
  wait "$SPARK_STARTER" || cluster_fail "the Spark master did not start (see above)"
  wait_log worker "Successfully registered with master" $WORKER
  cluster_say "spark master $SPARK_MASTER_URL (UI http://127.0.0.1:$SPARK_MASTER_UI_PORT), one worker"
}
