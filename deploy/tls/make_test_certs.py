"""deploy/tls/make-test-certs OUTDIR [--nodes N] [--hosts HOST,...] [--days D]

Throwaway certificates for the tests and for trying TLS out on this machine; never for production (the CA is made
here, its key deleted once it has signed, and every key is unencrypted). Made with openssl; the Java stores with
keytool (openjdk-17) and openssl. OUTDIR (created 0700) is what deploy/local/cassandra's CASSANDRA_CLIENT_TLS_DIR
wants, plus the client side of every test:

  ca.crt                   the test CA (EC P-256)
  node.crt, node.key       serverAuth; SANs IP:127.0.0.1 .. 127.0.0.N (--nodes, default 1), every --hosts entry
                           (an IP address or a DNS name), and DNS:localhost (a Java client checking host names
                           looks 127.0.0.1 up and gets "localhost"); key unencrypted PKCS#8
  client.crt, client.key   clientAuth, signed by the test CA (CN telemetry-test-client)
  truststore.p12           PKCS12 trust store holding ca.crt          } for Java clients (the Spark connector takes
  keystore.p12             PKCS12 key store: client.key + client.crt  } JKS or PKCS12 only); both open with the
  stores.password          the stores' (random) password              } password in stores.password
  wrong/ca.crt             another CA, which signed neither the node nor client.crt
  wrong/client.crt, .key   a clientAuth certificate signed by the wrong CA

Keys, stores and the password file are 0600, certificates 0644. Existing files of these names are replaced.
Exit 0 with the list of what was made, 2 on bad arguments, 1 if openssl or keytool fails.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import subprocess
import sys
from pathlib import Path

from telemetry_analytics.java_stores import StoreError, write_stores  # standard library only

CURVE = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]


class ToolFailed(Exception):
    pass


def openssl(*args: str) -> None:
    done = subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ToolFailed(f"openssl {args[0]} failed: {' '.join(done.stderr.split())[:400]}")


def new_key(path: Path) -> Path:
    """An unencrypted PKCS#8 EC key (what Cassandra's PEM factory and every client here read), 0600."""
    openssl("genpkey", *CURVE, "-out", str(path))
    path.chmod(0o600)
    return path


def certificate(path: Path) -> Path:
    path.chmod(0o644)
    return path


def make_ca(folder: Path, name: str, days: int) -> tuple[Path, Path]:
    key = new_key(folder / "ca.key")
    cert = folder / "ca.crt"
    openssl("req", "-x509", "-new", "-key", str(key), "-days", str(days), "-subj", f"/CN={name}",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            "-out", str(cert))
    return certificate(cert), key


def make_leaf(folder: Path, name: str, ca: tuple[Path, Path], cn: str, extensions: list[str], days: int) -> None:
    """folder/name.key and folder/name.crt signed by ca, with the given X.509v3 extension lines."""
    key = new_key(folder / f"{name}.key")
    csr, ext = folder / f"{name}.csr", folder / f"{name}.ext"
    try:
        openssl("req", "-new", "-key", str(key), "-subj", f"/CN={cn}", "-out", str(csr))
        ext.write_text("\n".join(["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature",
                                  *extensions, "subjectKeyIdentifier=hash", "authorityKeyIdentifier=keyid"]) + "\n")
        openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
                "-set_serial", f"0x{secrets.token_hex(16)}", "-days", str(days), "-extfile", str(ext),
                "-out", str(folder / f"{name}.crt"))
    finally:
        csr.unlink(missing_ok=True)
        ext.unlink(missing_ok=True)
    certificate(folder / f"{name}.crt")


def subject_alt_names(nodes: int, hosts: list[str]) -> str:
    names = [f"IP:127.0.0.{n}" for n in range(1, nodes + 1)]
    for host in hosts:
        try:
            names.append(f"IP:{ipaddress.ip_address(host)}")
        except ValueError:
            names.append(f"DNS:{host}")
    names.append("DNS:localhost")
    return ",".join(dict.fromkeys(names))


def make_all(out: Path, nodes: int, hosts: list[str], days: int) -> list[tuple[Path, str]]:
    wrong_dir = out / "wrong"
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    wrong_dir.mkdir(mode=0o700, exist_ok=True)
    sans = subject_alt_names(nodes, hosts)
    client = ["extendedKeyUsage=clientAuth"]

    ca = make_ca(out, "telemetry test CA", days)
    make_leaf(out, "node", ca, "telemetry test node", ["extendedKeyUsage=serverAuth", f"subjectAltName={sans}"],
              days)
    make_leaf(out, "client", ca, "telemetry-test-client", client, days)
    ca[1].unlink()  # nothing else gets signed by it
    wrong = make_ca(wrong_dir, "some other CA", days)
    make_leaf(wrong_dir, "client", wrong, "telemetry-test-client", client, days)
    wrong[1].unlink()

    password = secrets.token_urlsafe(24)
    password_file = out / "stores.password"
    password_file.write_text(password + "\n")
    password_file.chmod(0o600)
    stores = write_stores(out, password, str(out / "ca.crt"), str(out / "client.crt"), str(out / "client.key"))
    return [(out / "ca.crt", "the test CA"),
            (out / "node.crt", f"node certificate, serverAuth, {sans.replace(',', ' ')}"),
            (out / "node.key", "its key (PKCS#8, unencrypted)"),
            (out / "client.crt", "client certificate, clientAuth, signed by the test CA"),
            (out / "client.key", "its key"),
            (stores.truststore, "PKCS12 trust store with ca.crt"),
            (stores.keystore, "PKCS12 key store with client.key and client.crt"),
            (password_file, "the password of both stores"),
            (wrong_dir / "ca.crt", "another CA (signed nothing you would trust)"),
            (wrong_dir / "client.crt", "client certificate signed by the other CA"),
            (wrong_dir / "client.key", "its key")]


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="deploy/tls/make-test-certs", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    # Optional for argparse, which would report it missing before an unknown option; checked below.
    p.add_argument("outdir", type=Path, nargs="?")
    p.add_argument("--nodes", type=int, default=1, help="SANs for 127.0.0.1 .. 127.0.0.N (default 1; 0: none)")
    p.add_argument("--hosts", default="", help="more SANs, comma-separated IP addresses or DNS names")
    p.add_argument("--days", type=int, default=30, help="validity in days (default 30)")
    args = p.parse_args(argv)
    if args.outdir is None:
        p.error("the following arguments are required: outdir")
    if not 0 <= args.nodes <= 99:
        p.error("--nodes takes 0-99 (nodes are 127.0.0.1-99)")
    if args.days < 1:
        p.error("--days must be at least 1")
    args.hosts = [h.strip() for h in args.hosts.split(",") if h.strip()]
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    os.umask(0o077)  # nothing is readable by others even for the moment before its chmod
    try:
        made = make_all(args.outdir.resolve(), args.nodes, args.hosts, args.days)
    except (ToolFailed, StoreError, OSError, subprocess.TimeoutExpired) as error:
        print(f"make-test-certs: {error}", file=sys.stderr)
        return 1
    print(f"Throwaway test certificates in {args.outdir.resolve()} (valid {args.days} days; "
          f"CASSANDRA_CLIENT_TLS_DIR={args.outdir.resolve()}):")
    for path, what in made:
        print(f"  {oct(path.stat().st_mode & 0o777)[2:]}  {path.relative_to(args.outdir.resolve())}: {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
