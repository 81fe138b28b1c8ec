"""telemetry_cassandra: the driver's settings from arguments and TELEMETRY_CASSANDRA_* variables, and one real
connection to the local node."""

import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from cassandra.auth import PlainTextAuthProvider
from cassandra.policies import ConstantReconnectionPolicy

from telemetry_cassandra import (CredentialsFileError, TlsFileError, check_files, cluster_from_env, cluster_options,
                                read_credentials_file, settings_from_env)

ENV = "TELEMETRY_CASSANDRA_"
MAKE_TEST_CERTS = Path(__file__).resolve().parents[3] / "deploy" / "tls" / "make-test-certs"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """deploy/tls/make-test-certs' CA, its client certificate, and a key that is not the client certificate's."""
    out = tmp_path_factory.mktemp("pki") / "certs"
    subprocess.run([str(MAKE_TEST_CERTS), str(out)], check=True, capture_output=True, timeout=120)
    return {"ca": str(out / "ca.crt"), "client": (str(out / "client.crt"), str(out / "client.key")),
            "other_key": str(out / "wrong" / "client.key")}


def test_without_variables_the_defaults():
    assert settings_from_env({}, default_hosts="10.0.0.9") == {
        "hosts": ["10.0.0.9"], "port": 9042, "username": None, "password": None,
        "tls_ca": None, "tls_cert": None, "tls_key": None}


def test_every_variable_is_read():
    env = {f"{ENV}HOSTS": " 10.0.0.1, 10.0.0.2 ,", f"{ENV}PORT": "9142", f"{ENV}USERNAME": "gateway",
           f"{ENV}PASSWORD": "s3cret", f"{ENV}TLS_CA": "/etc/ca.crt", f"{ENV}TLS_CERT": "/etc/c.crt",
           f"{ENV}TLS_KEY": "/etc/c.key"}
    assert settings_from_env(env, default_hosts="127.0.0.1") == {
        "hosts": ["10.0.0.1", "10.0.0.2"], "port": 9142, "username": "gateway", "password": "s3cret",
        "tls_ca": "/etc/ca.crt", "tls_cert": "/etc/c.crt", "tls_key": "/etc/c.key"}


def test_empty_variables_count_as_unset():
    env = {f"{ENV}{name}": "" for name in ("HOSTS", "PORT", "USERNAME", "PASSWORD", "TLS_CA", "TLS_CERT", "TLS_KEY")}
    assert settings_from_env(env, default_hosts="127.0.0.2") == settings_from_env({}, default_hosts="127.0.0.2")


def test_a_credentials_file_gives_the_username_and_password(tmp_path):
    creds = tmp_path / "admin.toml"
    creds.write_text('username = "telemetry_admin"\npassword = "p@ss \\"word\\""\n')
    settings = settings_from_env({f"{ENV}CREDENTIALS_FILE": str(creds)})
    assert (settings["username"], settings["password"]) == ("telemetry_admin", 'p@ss "word"')
    # _USERNAME/_PASSWORD win over the file, as in the gateway's config
    settings = settings_from_env({f"{ENV}CREDENTIALS_FILE": str(creds), f"{ENV}USERNAME": "u", f"{ENV}PASSWORD": "p"})
    assert (settings["username"], settings["password"]) == ("u", "p")


@pytest.mark.parametrize("text, reason", [(None, "unreadable"), ("username = ", "unreadable"),
                                          ('username = "u"\n', "required"), ("username = 1\npassword = 'p'", "required")])
def test_a_bad_credentials_file_is_named_without_its_content(tmp_path, text, reason):
    creds = tmp_path / "creds.toml"
    if text is not None:
        creds.write_text(text)
    with pytest.raises(CredentialsFileError) as caught:
        settings_from_env({f"{ENV}CREDENTIALS_FILE": str(creds)})
    assert caught.value.reason == reason
    assert str(creds) in str(caught.value)


def test_a_credentials_file_that_is_not_utf8_is_unreadable_not_a_crash(tmp_path):
    creds = tmp_path / "creds.toml"
    creds.write_bytes(b'username = "\xff"\npassword = "x"\n')
    with pytest.raises(CredentialsFileError, match="cannot read"):
        read_credentials_file(str(creds))


def test_a_port_that_is_no_number_is_named():
    with pytest.raises(ValueError, match=f"{ENV}PORT must be a port number, not 'ninety'"):
        settings_from_env({f"{ENV}PORT": "ninety"})


@pytest.mark.parametrize("hosts", ["", " , ", []])
def test_no_contact_points_is_an_error(hosts):
    with pytest.raises(ValueError, match="no Cassandra contact points"):
        cluster_options(hosts)


def test_hosts_as_text_or_list_never_as_characters():
    assert cluster_options("10.0.0.1,10.0.0.2")["contact_points"] == ["10.0.0.1", "10.0.0.2"]
    assert cluster_options(("10.0.0.3",))["contact_points"] == ["10.0.0.3"]


def test_plain_options_protocol_5_and_driver_options_passed_on():
    policy = ConstantReconnectionPolicy(0.5)
    options = cluster_options(["127.0.0.1"], port=9043, connect_timeout=3, reconnection_policy=policy)
    assert options == {"contact_points": ["127.0.0.1"], "port": 9043, "protocol_version": 5, "auth_provider": None,
                       "ssl_context": None, "connect_timeout": 3, "reconnection_policy": policy}
    assert cluster_options("127.0.0.1", protocol_version=4)["protocol_version"] == 4


def test_credentials_become_a_plain_text_auth_provider():
    provider = cluster_options("127.0.0.1", username="gateway", password="s3cret")["auth_provider"]
    assert isinstance(provider, PlainTextAuthProvider)
    assert (provider.username, provider.password) == ("gateway", "s3cret")
    assert cluster_options("127.0.0.1", username="gateway")["auth_provider"].password == ""


def test_a_password_without_username_is_refused_without_showing_it():
    with pytest.raises(ValueError, match="password is given without a username") as refused:
        cluster_options("127.0.0.1", password="s3cret")
    assert "s3cret" not in str(refused.value)


@pytest.mark.parametrize("given, missing", [({"tls_cert": "c.crt"}, "key"), ({"tls_key": "c.key"}, "certificate")])
def test_half_a_client_certificate_is_refused(given, missing):
    with pytest.raises(ValueError, match=f"without its {missing}: tls_cert and tls_key go together "
                                         f"\\({ENV}TLS_CERT, {ENV}TLS_KEY\\)"):
        cluster_options("127.0.0.1", tls_ca="ca.crt", **given)


def test_a_client_certificate_needs_the_ca():
    with pytest.raises(ValueError, match=f"needs tls_ca \\({ENV}TLS_CA\\)"):
        cluster_options("127.0.0.1", tls_cert="c.crt", tls_key="c.key")


@pytest.mark.parametrize("option", ["contact_points", "auth_provider", "ssl_context", "ssl_options"])
def test_own_settings_cannot_be_smuggled_in_as_driver_options(option):
    with pytest.raises(TypeError, match=option):
        cluster_options(["127.0.0.1"], **{option: None})


def test_tls_verifies_the_node_against_the_ca_alone(pki):
    context = cluster_options("127.0.0.1", tls_ca=pki["ca"])["ssl_context"]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert [dict(field[0] for field in ca["subject"])["commonName"]
            for ca in context.get_ca_certs()] == ["telemetry test CA"]


def test_tls_client_certificate_is_loaded_and_a_wrong_key_is_named(pki):
    cert, key = pki["client"]
    assert isinstance(cluster_options("127.0.0.1", tls_ca=pki["ca"], tls_cert=cert, tls_key=key)["ssl_context"],
                      ssl.SSLContext)
    with pytest.raises(TlsFileError, match=f"cannot use TLS client certificate {cert} with key") as refused:
        cluster_options("127.0.0.1", tls_ca=pki["ca"], tls_cert=cert, tls_key=pki["other_key"])
    assert refused.value.setting == "tls_cert"


def test_a_missing_ca_file_is_named(tmp_path):
    missing = tmp_path / "nope.crt"
    with pytest.raises(TlsFileError, match=f"cannot use TLS CA file {missing}") as refused:
        cluster_options("127.0.0.1", tls_ca=str(missing))
    assert refused.value.setting == "tls_ca"


def test_check_files_finds_what_cluster_options_finds(pki, tmp_path):
    settings = {**settings_from_env({}), "tls_ca": pki["ca"], "tls_cert": pki["client"][0], "tls_key": pki["other_key"]}
    with pytest.raises(TlsFileError, match="cannot use TLS client certificate"):
        check_files(settings)
    with pytest.raises(ValueError, match="without a username"):
        check_files({**settings_from_env({}), "password": "x"})
    check_files({**settings, "tls_key": pki["client"][1]})


def test_the_settings_import_without_the_driver():
    """The Spark jobs' archive carries this package to hosts without the Cassandra driver (the connector is theirs)."""
    code = ("import sys, telemetry_cassandra as t; t.settings_from_env({}); t.check_files(t.settings_from_env({})); "
            "assert 'cassandra' not in sys.modules, 'the driver was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.cassandra
def test_cluster_from_env_connects_where_the_variables_say(cassandra_node, monkeypatch):
    monkeypatch.setenv(f"{ENV}HOSTS", cassandra_node)
    monkeypatch.setenv(f"{ENV}PORT", "9042")
    cluster = cluster_from_env(default_hosts="192.0.2.1", connect_timeout=5)  # TEST-NET: unreachable by design
    try:
        session = cluster.connect()
        assert session.execute("SELECT release_version FROM system.local").one().release_version.startswith("5.")
        assert cluster.protocol_version == 5
    finally:
        cluster.shutdown()
