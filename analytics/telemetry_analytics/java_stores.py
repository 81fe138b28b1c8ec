"""PKCS12 stores for Java clients from the PEM files every other client of the project uses.

The Spark connector reads only JKS or PKCS12 stores, while the gateway, schema/migrate and the launcher take the
TELEMETRY_CASSANDRA_TLS_CA / _TLS_CERT / _TLS_KEY PEM files. spark_session converts those at run time with this
module, and deploy/tls/make-test-certs makes ready-made stores with it. Standard library only (the certificate
tool runs without the venv): keytool for the trust store (a PKCS12 made by OpenSSL 3.0 lacks the attribute that
makes Java trust a certificate entry), openssl for the key store. The store password reaches both tools through
the environment, never their command lines.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

PASSWORD_VARIABLE = "TELEMETRY_STORE_PASSWORD"  # set for the two tools only, never exported further
STORE_TYPE = "PKCS12"


class StoreError(ValueError):
    """A PEM file that cannot be turned into a store; the text names the file and the tool's complaint."""


class Stores(NamedTuple):
    truststore: Path
    keystore: Path | None  # only with a client certificate
    password: str  # of both


def keytool() -> str:
    """keytool of the JVM that runs Spark (JAVA_HOME), else the one on PATH."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(Path(java_home, "bin", "keytool"), os.X_OK):
        return str(Path(java_home, "bin", "keytool"))
    found = shutil.which("keytool")
    if not found:
        raise StoreError("keytool (from the Java runtime) is needed to make a PKCS12 trust store; it is not on PATH "
                         "and JAVA_HOME does not have it")
    return found


def _run(what: str, command: list[str], password: str) -> None:
    env = {**os.environ, PASSWORD_VARIABLE: password}
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except OSError as error:
        raise StoreError(f"cannot make {what}: {error}") from None
    if done.returncode != 0:
        complaint = " ".join((done.stderr or done.stdout).split())[:300]
        raise StoreError(f"cannot make {what}: {complaint}")


def write_stores(folder: Path, password: str, ca: str, cert: str | None = None, key: str | None = None) -> Stores:
    """folder/truststore.p12 trusting the certificate(s) in the PEM file ca, and with cert and key
    folder/keystore.p12 holding the key with its certificate (and any chain in the cert file); both 0600."""
    truststore = folder / "truststore.p12"
    truststore.unlink(missing_ok=True)  # keytool adds to an existing store, and refuses a second "ca" entry
    _run(f"a trust store from the CA file {ca}",
         [keytool(), "-importcert", "-noprompt", "-alias", "ca", "-file", str(ca), "-keystore", str(truststore),
          "-storetype", STORE_TYPE, "-storepass:env", PASSWORD_VARIABLE], password)
    truststore.chmod(0o600)
    keystore = None
    if cert:
        keystore = folder / "keystore.p12"
        _run(f"a key store from the client certificate {cert} and key {key}",
             ["openssl", "pkcs12", "-export", "-in", str(cert), "-inkey", str(key), "-name", "client",
              "-out", str(keystore), "-passout", f"env:{PASSWORD_VARIABLE}"], password)
        keystore.chmod(0o600)
    return Stores(truststore, keystore, password)
