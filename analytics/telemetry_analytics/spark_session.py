"""The SparkSession of a job, connected the one way the Spark side connects to Cassandra (connection_conf), and
one-line operator logs with the start-up / work split."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from .java_stores import StoreError, Stores, write_stores
from .local_days import BadInput

# Python-side timestamps: pyspark turns naive datetimes into epoch values with the process's local zone; pinning
# it to UTC makes collected timestamps UTC, whatever the machine's zone.
os.environ["TZ"] = "UTC"
time.tzset()

T0 = time.monotonic()  # import time of the job module, i.e. right after spark-submit started Python

# Reads and writes at LOCAL_QUORUM unless spark-submit says otherwise (--conf KEY=LEVEL): what the gateway wrote
# at LOCAL_QUORUM is then read back whole even with a replica down or behind, and a summary written is on a
# majority of its replicas. The connector's defaults are LOCAL_ONE for reads (a replica that missed writes may
# answer alone) and LOCAL_QUORUM for writes. On one node either level is that node.
CONSISTENCY_KEYS = ("spark.cassandra.input.consistency.level", "spark.cassandra.output.consistency.level")
DEFAULT_CONSISTENCY = "LOCAL_QUORUM"


def log(job: str, message: str) -> None:
    print(f"{job}: {message}", file=sys.stderr, flush=True)


# Java system property read by the Cassandra driver's configuration over everything set programmatically: the
# connector 3.5.1 hard-codes hostname-validation = false (its DefaultConnectionFactory) and has no setting for it.
HOSTNAME_VALIDATION = "datastax-java-driver.advanced.ssl-engine-factory.hostname-validation"
SSL = "spark.cassandra.connection.ssl."


class ConnectionFailed(Exception):
    """Cassandra refused or could not be reached; the text says why, without secrets (exit 1)."""


def connector_conf(settings: dict, stores: Stores | None, cipher_suites: list[str]) -> dict[str, str]:
    """The connector's settings for settings_from_env's dict (hosts, port, username, password, tls_*): credentials
    as spark.cassandra.auth.*, TLS through the PKCS12 stores made from the PEM files. cipher_suites replaces the
    connector's default (two TLS 1.2 RSA key-exchange suites, unusable with EC certificates or TLS 1.3)."""
    conf = {"spark.cassandra.connection.host": ",".join(settings["hosts"]),
            "spark.cassandra.connection.port": str(settings["port"])}
    if settings["username"]:
        conf["spark.cassandra.auth.username"] = settings["username"]
        conf["spark.cassandra.auth.password"] = settings["password"] or ""
    if stores is not None:
        conf.update({SSL + "enabled": "true", SSL + "enabledAlgorithms": ",".join(cipher_suites),
                     SSL + "trustStore.path": str(stores.truststore), SSL + "trustStore.password": stores.password,
                     SSL + "trustStore.type": "PKCS12"})
        if stores.keystore is not None:
            conf.update({SSL + "clientAuth.enabled": "true", SSL + "keyStore.path": str(stores.keystore),
                         SSL + "keyStore.password": stores.password, SSL + "keyStore.type": "PKCS12"})
    return conf


def connection_conf(hosts: str, port: int, submitted, jvm) -> dict[str, str]:
    """The one way a job connects: hosts and port from its options, credentials and TLS as every other client of
    the project takes them (telemetry_cassandra.settings_from_env: TELEMETRY_CASSANDRA_USERNAME / _PASSWORD or
    _CREDENTIALS_FILE, _TLS_CA / _TLS_CERT / _TLS_KEY). Secrets go into the driver's SparkConf from this process,
    never onto a command line. The PEM files become PKCS12 stores (random password) in a private temporary folder,
    removed when the job ends. With TLS the driver also checks that the node's certificate names the address it
    connected to (a system property for this JVM, extraJavaOptions for executors). Settings that do not go
    together and files that cannot be used are BadInput, named, before Spark starts."""
    from telemetry_cassandra import check_files, settings_from_env

    try:
        settings = {**settings_from_env(os.environ),
                    "hosts": [host.strip() for host in hosts.split(",") if host.strip()], "port": port}
        check_files(settings)  # the same checks and file errors as every Python client
    except ValueError as error:
        raise BadInput(str(error)) from None
    if not settings["tls_ca"]:
        return connector_conf(settings, None, [])
    folder = Path(tempfile.mkdtemp(prefix="telemetry-tls-"))  # 0700
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    try:
        stores = write_stores(folder, secrets.token_urlsafe(24), settings["tls_ca"], settings["tls_cert"],
                              settings["tls_key"])
    except StoreError as error:
        raise BadInput(str(error)) from None
    jvm.java.lang.System.setProperty(HOSTNAME_VALIDATION, "true")
    suites = list(jvm.javax.net.ssl.SSLContext.getDefault().getDefaultSSLParameters().getCipherSuites())
    conf = connector_conf(settings, stores, suites)
    executor_options = submitted.get("spark.executor.extraJavaOptions", "")
    conf["spark.executor.extraJavaOptions"] = f"{executor_options} -D{HOSTNAME_VALIDATION}=true".strip()
    return conf


def unset_only(defaults: dict[str, str], submitted: Iterable[str]) -> dict[str, str]:
    """The job's settings that spark-submit was not given (--conf, spark-defaults.conf): what the operator set
    there wins, e.g. spark.cassandra.connection.host on a cluster whose jobs are submitted by hand."""
    given = set(submitted)
    return {key: value for key, value in defaults.items() if key not in given}


def start(job: str, hosts: str, port: int):
    """Settings a job cannot run without are set here, so a bare `spark-submit … analytics/<job>.py` works as
    long as --packages names the connector."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    SparkContext._ensure_initialized()  # the JVM spark-submit started, before any SparkContext
    submitted = SparkConf()  # what spark-submit was given (--conf, SPARK_SUBMIT_EXTRA)
    builder = (SparkSession.builder.appName(f"telemetry-{job}")
               .config("spark.sql.extensions", "com.datastax.spark.connector.CassandraSparkExtensions")
               .config("spark.sql.session.timeZone", "UTC"))
    own = connection_conf(hosts, port, submitted, SparkContext._jvm)
    for key, value in unset_only(own, (key for key, _ in submitted.getAll())).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    submitted = spark.sparkContext.getConf()
    for key in CONSISTENCY_KEYS:
        if not submitted.contains(key):
            spark.conf.set(key, DEFAULT_CONSISTENCY)
    if "spark.sql.shuffle.partitions" not in submitted.toDebugString():
        # A day is a few hundred (source, metric) groups: Spark's default of 200 shuffle partitions costs more in
        # task overhead than the aggregation itself. Two per core keeps every core busy.
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * spark.sparkContext.defaultParallelism))
    if spark.sparkContext.getConf().get("spark.ui.showConsoleProgress", "false") != "true":
        ProgressLog(spark, job).start()
    log(job, f"spark {spark.version} up, master {spark.sparkContext.master}, "
             f"consistency read {spark.conf.get(CONSISTENCY_KEYS[0], '?')} write {spark.conf.get(CONSISTENCY_KEYS[1], '?')}, "
             f"start-up {time.monotonic() - T0:.1f} s")
    _connect(spark, job)
    return spark


_sessions = {}


def _connect(spark, job: str) -> None:
    """Opens the connector's session (connections, cluster metadata) before any work. It is a fixed cost of every
    run whatever the data (seconds in a fresh JVM), so it belongs to start-up; until now it was paid by the first
    read and counted as work. The session stays open until stop(): the connector's cache hands the same session
    to every read and write of the job instead of closing it after a few idle seconds and reconnecting."""
    from py4j.protocol import Py4JJavaError

    t0 = time.monotonic()
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.sc().getConf()
    connector = jvm.com.datastax.spark.connector.cql.CassandraConnector.apply(conf)
    try:
        session = connector.openSession()
    except Py4JJavaError as error:
        spark.stop()
        raise ConnectionFailed(refusal(error.java_exception, conf.get("spark.cassandra.connection.host"),
                                       conf.get("spark.cassandra.connection.port"),
                                       conf.contains(SSL + "enabled"), conf.contains("spark.cassandra.auth.username"))
                               ) from None
    _sessions[id(spark)] = session
    log(job, f"connector session open in {time.monotonic() - t0:.1f} s to "
             f"{conf.get('spark.cassandra.connection.host')}, start-up {time.monotonic() - T0:.1f} s; "
             f"{security(session, conf, jvm)}")


def security(session, conf, jvm) -> str:
    """What the open session does for authentication and TLS, read back from the live driver (not from what was
    asked for): user name, TLS, host name verification, client certificate."""
    user = conf.get("spark.cassandra.auth.username", "")
    who = f"as user {user}" if user else "without credentials"
    if not session.getContext().getSslEngineFactory().isPresent():
        return f"{who}, plain CQL (no TLS)"
    options = jvm.com.datastax.oss.driver.api.core.config.DefaultDriverOption
    checked = session.getContext().getConfig().getDefaultProfile().getBoolean(options.SSL_HOSTNAME_VALIDATION, False)
    client = "with a client certificate" if conf.get(SSL + "clientAuth.enabled", "false") == "true" else \
        "no client certificate"
    return (f"{who}, TLS: node certificate verified against TELEMETRY_CASSANDRA_TLS_CA, "
            f"host name {'checked' if checked else 'NOT checked'}, {client}")


def refusal(java_error, hosts: str, port: str, tls: bool, credentials: bool) -> str:
    """One line for a session that could not be opened: where, the innermost cause (what actually went wrong;
    the driver nests it in three or four wrappers) and what to look at. Driver messages hold no passwords."""
    causes, seen = [], java_error
    while seen is not None and len(causes) < 20:
        causes.append(seen)
        suppressed = seen.getSuppressed()  # AllNodesFailedException keeps each node's error there
        seen = seen.getCause() or (suppressed[0] if len(suppressed) else None)
    root = causes[-1]
    names = " ".join(c.getClass().getName() for c in causes)
    text = f"cannot connect to Cassandra at {hosts}:{port}: {root.getClass().getSimpleName()}: {root.getMessage()}"
    if "AuthenticationException" in names:
        auth = [c for c in causes if "AuthenticationException" in c.getClass().getName()][0]
        text = f"Cassandra at {hosts}:{port} refused the login: {auth.getMessage()}"
        return text + ("; check the password in TELEMETRY_CASSANDRA_CREDENTIALS_FILE (or _PASSWORD): rotated?"
                       if credentials else "; set TELEMETRY_CASSANDRA_CREDENTIALS_FILE (or _USERNAME and _PASSWORD)")
    if "ssl" in names.lower():
        return text + ("; the TLS handshake failed: is TELEMETRY_CASSANDRA_TLS_CA the CA that signed the node's "
                       "certificate, does that certificate name the address connected to, and does the node want a "
                       "client certificate (TELEMETRY_CASSANDRA_TLS_CERT/_TLS_KEY) signed by a CA it trusts?")
    if not tls and "ClosedConnectionException" in names:
        return text + ("; if the node accepts only TLS, set TELEMETRY_CASSANDRA_TLS_CA (and _TLS_CERT/_TLS_KEY "
                       "if it wants a client certificate)")
    return text


def stop(spark) -> None:
    session = _sessions.pop(id(spark), None)
    if session is not None:
        session.close()
    spark.stop()


class Timer:
    def __init__(self):
        self.started = time.monotonic()

    def seconds(self) -> float:
        return time.monotonic() - self.started


class ProgressLog(threading.Thread):
    """Without Spark's console bar (no terminal): every `every` s, one line per stage that is still running."""

    def __init__(self, spark, job: str, every: float = 15.0):
        super().__init__(name="progress-log", daemon=True)
        self.tracker, self.job, self.every = spark.sparkContext.statusTracker(), job, every

    def run(self) -> None:
        while True:
            time.sleep(self.every)
            try:
                for stage_id in self.tracker.getActiveStageIds():
                    info = self.tracker.getStageInfo(stage_id)
                    if info:
                        log(self.job, f"progress: stage {stage_id} ({info.name}): "
                                      f"{info.numCompletedTasks}/{info.numTasks} tasks done, {info.numActiveTasks} running")
            except Exception:  # the context is stopping
                return
