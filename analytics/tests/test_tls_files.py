"""deploy/tls/make-test-certs (real openssl and keytool), the PKCS12 stores the Spark jobs make from PEM files
(java_stores), and the connector settings built from the TELEMETRY_CASSANDRA_* settings (no Spark, no Cassandra)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from telemetry_analytics.java_stores import StoreError, Stores, keytool, write_stores
from telemetry_analytics.local_days import BadInput
from telemetry_analytics.spark_session import connection_conf, connector_conf

ROOT = Path(__file__).resolve().parents[2]
MAKE_TEST_CERTS = ROOT / "deploy" / "tls" / "make-test-certs"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = tmp_path_factory.mktemp("pki") / "certs"
    done = subprocess.run([str(MAKE_TEST_CERTS), str(out), "--nodes", "2", "--hosts", "10.1.2.3,db.example"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def openssl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30)


def store_entries(store: Path, password: str) -> list[str]:
    """(alias, kind) lines of keytool -list, e.g. 'ca, …, trustedCertEntry,'; the password through the
    environment."""
    listed = subprocess.run([keytool(), "-list", "-keystore", str(store), "-storetype", "PKCS12",
                             "-storepass:env", "PW"], env={"PW": password, "PATH": "/usr/bin:/bin"},
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    return [line.split(",")[0] + " " + line.split(",")[-2].strip() for line in listed.stdout.splitlines()
            if line.count(",") >= 2]


def test_every_file_is_made_with_its_mode_and_listed(made):
    out, printed = made
    files = {str(p.relative_to(out)): mode(p) for p in out.rglob("*") if p.is_file()}
    assert files == {"ca.crt": 0o644, "node.crt": 0o644, "node.key": 0o600, "client.crt": 0o644,
                     "client.key": 0o600, "truststore.p12": 0o600, "keystore.p12": 0o600, "stores.password": 0o600,
                     "wrong/ca.crt": 0o644, "wrong/client.crt": 0o644, "wrong/client.key": 0o600}
    assert mode(out) == 0o700
    for name in files:  # the CA keys are gone: nothing else gets signed
        assert f"  {oct(files[name])[2:]}  {name}: " in printed
    assert (out / "node.key").read_text().startswith("-----BEGIN PRIVATE KEY-----\n")  # PKCS#8, unencrypted


def test_node_certificate_names_the_nodes_and_hosts_and_chains_to_the_ca(made):
    out, _ = made
    text = openssl("x509", "-in", str(out / "node.crt"), "-noout", "-ext", "subjectAltName,extendedKeyUsage").stdout
    assert "IP Address:127.0.0.1, IP Address:127.0.0.2, IP Address:10.1.2.3, DNS:db.example, DNS:localhost" in text
    assert "TLS Web Server Authentication" in text and "Client Authentication" not in text
    client = openssl("x509", "-in", str(out / "client.crt"), "-noout", "-ext", "extendedKeyUsage").stdout
    assert "TLS Web Client Authentication" in client
    verified = openssl("verify", "-CAfile", str(out / "ca.crt"), str(out / "node.crt"), str(out / "client.crt"))
    assert verified.returncode == 0 and verified.stdout.count(": OK") == 2, verified.stdout + verified.stderr


def test_the_wrong_ca_signed_its_own_client_certificate_and_nothing_else(made):
    out, _ = made
    wrong_ca = str(out / "wrong" / "ca.crt")
    assert openssl("verify", "-CAfile", wrong_ca, str(out / "wrong" / "client.crt")).returncode == 0
    for cert in ("node.crt", "client.crt"):
        assert openssl("verify", "-CAfile", wrong_ca, str(out / cert)).returncode != 0
    assert openssl("verify", "-CAfile", str(out / "ca.crt"), str(out / "wrong" / "client.crt")).returncode != 0


def test_java_stores_open_with_the_password_file(made):
    out, _ = made
    password = (out / "stores.password").read_text().strip()
    assert len(password) >= 24
    assert store_entries(out / "truststore.p12", password) == ["ca trustedCertEntry"]
    assert store_entries(out / "keystore.p12", password) == ["client PrivateKeyEntry"]
    wrong = subprocess.run([keytool(), "-list", "-keystore", str(out / "truststore.p12"), "-storepass:env", "PW"],
                           env={"PW": "not-" + password}, capture_output=True, text=True, timeout=60)
    assert wrong.returncode != 0 and "password was incorrect" in wrong.stdout + wrong.stderr


def test_bad_arguments_exit_2():
    done = subprocess.run([str(MAKE_TEST_CERTS), "/tmp/unused", "--nodes", "100"], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2 and "--nodes takes 0-99" in done.stderr


def test_stores_at_run_time_are_private_and_a_bad_pem_file_is_named(made, tmp_path):
    out, _ = made
    stores = write_stores(tmp_path, "pw-of-this-run", str(out / "ca.crt"))
    assert stores == Stores(tmp_path / "truststore.p12", None, "pw-of-this-run")
    assert mode(stores.truststore) == 0o600 and store_entries(stores.truststore, "pw-of-this-run") == [
        "ca trustedCertEntry"]
    with pytest.raises(StoreError, match=f"cannot make a trust store from the CA file {out / 'node.key'}: "):
        write_stores(tmp_path, "pw-of-this-run", str(out / "node.key"))
    with pytest.raises(StoreError, match=f"cannot make a key store from the client certificate {out / 'client.crt'} "
                                         f"and key {out / 'wrong' / 'client.key'}: "):
        write_stores(tmp_path, "pw-of-this-run", str(out / "ca.crt"), str(out / "client.crt"),
                     str(out / "wrong" / "client.key"))


SETTINGS = {"hosts": ["127.0.0.7", "127.0.0.8"], "port": 9142, "username": None, "password": None,
            "tls_ca": None, "tls_cert": None, "tls_key": None}


def test_without_credentials_or_tls_only_the_address():
    assert connector_conf(SETTINGS, None, []) == {"spark.cassandra.connection.host": "127.0.0.7,127.0.0.8",
                                                  "spark.cassandra.connection.port": "9142"}


def test_credentials_and_mutual_tls_become_the_connectors_settings():
    settings = {**SETTINGS, "username": "telemetry_analytics", "password": "s3cret"}
    stores = Stores(Path("/tmp/x/truststore.p12"), Path("/tmp/x/keystore.p12"), "store-pw")
    ssl = "spark.cassandra.connection.ssl."
    assert connector_conf(settings, stores, ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"]) == {
        "spark.cassandra.connection.host": "127.0.0.7,127.0.0.8", "spark.cassandra.connection.port": "9142",
        "spark.cassandra.auth.username": "telemetry_analytics", "spark.cassandra.auth.password": "s3cret",
        ssl + "enabled": "true", ssl + "enabledAlgorithms": "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384",
        ssl + "trustStore.path": "/tmp/x/truststore.p12", ssl + "trustStore.password": "store-pw",
        ssl + "trustStore.type": "PKCS12", ssl + "clientAuth.enabled": "true",
        ssl + "keyStore.path": "/tmp/x/keystore.p12", ssl + "keyStore.password": "store-pw",
        ssl + "keyStore.type": "PKCS12"}
    server_only = connector_conf(SETTINGS, stores._replace(keystore=None), ["TLS_AES_128_GCM_SHA256"])
    assert not {key for key in server_only if "keyStore" in key or "clientAuth" in key}
    assert server_only[ssl + "trustStore.path"] == "/tmp/x/truststore.p12"


@pytest.mark.parametrize("variables, message", [
    ({"TLS_CA": "{out}/ca.crt", "TLS_CERT": "{out}/client.crt"},
     "a TLS client certificate is given without its key"),
    ({"TLS_CA": "{out}/node.key"}, "cannot use TLS CA file {out}/node.key"),
    ({"CREDENTIALS_FILE": "{out}/missing.toml"}, "cannot read credentials_file {out}/missing.toml"),
    ({"PASSWORD": "s3cret"}, "a Cassandra password is given without a username"),
])
def test_settings_that_cannot_work_are_named_before_spark_starts(made, monkeypatch, variables, message):
    out, _ = made
    for name in [name for name in os.environ if name.startswith("TELEMETRY_CASSANDRA_")]:
        monkeypatch.delenv(name)
    for name, value in variables.items():
        monkeypatch.setenv(f"TELEMETRY_CASSANDRA_{name}", value.format(out=out))
    with pytest.raises(BadInput, match=re.escape(message.format(out=out))) as refused:
        connection_conf("127.0.0.7", 9042, submitted=None, jvm=None)  # neither is reached
    assert "s3cret" not in str(refused.value)
