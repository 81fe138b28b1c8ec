"""deploy/pi/left_to_do.py's findings, from a config, the credentials file and `check`'s output (no files)."""

from __future__ import annotations

import sys
import tomllib

from pi_units import PI, ROOT

sys.path.insert(0, str(PI))
import left_to_do  # noqa: E402

EXAMPLE = tomllib.loads((ROOT / "gateway/contract/telemetry-gateway.example.toml").read_text())
MIGRATE = "sudo TELEMETRY_CASSANDRA_CREDENTIALS_FILE=/etc/telemetry-gateway/credentials.toml telemetry-schema-migrate"
CREDENTIALS = "/etc/telemetry-gateway/credentials.toml"
FRESH_CREDENTIALS = (CREDENTIALS, 0o100600, 'username = "telemetry_gateway"\npassword = ""\n')


def items(lines: list[str]) -> list[str]:
    return [line.split(":")[0] for line in lines]


def test_a_fresh_install_leaves_ports_keys_credentials_alerts_and_the_status_page():
    lines = left_to_do.left_to_do(EXAMPLE, FRESH_CREDENTIALS, "", MIGRATE, lambda path: False)
    assert items(lines) == ["ports", "keys", "credentials", "alerts", "status page"]
    assert lines[0].startswith("ports: /dev/ttyUSB0 is not present:")
    assert "firmware/scripts/provision PORT NODE_ID --keys /etc/telemetry-gateway/keys" in lines[1]
    assert 'listen = "0.0.0.0:9108" and host_names = ["<this Pi\'s name>.local"]' in lines[4]


def test_a_finished_install_leaves_nothing():
    config = {"serial": {"ports": ["/dev/telemetry/A1@9600", {"path": "/dev/telemetry/B2"}]},
              "signing": {"keys_credential": "keys"},
              "alerts": [{"name": "frost", "command": ["/usr/local/bin/telemetry-alert-webhook", "https://x/farm"]}],
              "metrics": {"listen": "0.0.0.0:9108", "host_names": ["greenhouse-pi.local"]}}
    present = {"/dev/telemetry/A1", "/dev/telemetry/B2", "/etc/telemetry-gateway/keys"}
    check = "cassandra 127.0.0.1:9042 (datacenter1): keyspace telemetry, schema version 2\ncheck: OK\n"
    assert left_to_do.left_to_do(config, (CREDENTIALS, 0o100600, 'password = "s3cret"'), check, MIGRATE,
                                 present.__contains__) == []


def test_credentials_a_missing_file_and_a_mode_the_gateway_refuses():
    assert "is missing" in left_to_do.credentials_left(CREDENTIALS, None, None)[0]
    assert left_to_do.credentials_left(CREDENTIALS, 0o100644, 'password = "x"') == [
        f"credentials: {CREDENTIALS} is mode 0644, the gateway refuses it: chmod 600 {CREDENTIALS}"]


def test_no_ports_a_missing_keys_file_and_a_placeholder_alert():
    assert left_to_do.ports_left({"ports": []}, lambda path: True)[0].startswith("ports: none configured:")
    assert left_to_do.keys_left({"keys_file": "/srv/keys"}, lambda path: False)[0].startswith(
        "keys: keys_file /srv/keys does not exist:")
    frost = [{"name": "frost", "command": ["hook", "https://ntfy.sh/CHANGE-ME-greenhouse"]}]
    assert left_to_do.alerts_left(frost) == [
        "alerts: rule frost still sends to the CHANGE-ME placeholder: put your own topic in"]


def test_the_status_page_on_loopback_off_or_open():
    for listen in ("127.0.0.1:9108", "localhost:9108", "[::1]:9108"):
        assert left_to_do.status_page_left({"listen": listen})[0].startswith(f"status page: http://{listen}/ answers")
    assert left_to_do.status_page_left({"listen": ""}) == ['status page: off ([metrics] listen = "")']
    assert left_to_do.status_page_left({"listen": "192.168.1.20:9108"}) == []


def test_cassandra_unreachable_or_the_schema_missing_names_the_migrate_command():
    output = ("problem: cannot reach Cassandra at 10.0.0.5:9042: NoHostAvailable: ('Unable to connect', {})\n"
              "check: 1 problem(s)\n")
    assert left_to_do.cassandra_left(output, MIGRATE) == [
        "cassandra: cannot reach Cassandra at 10.0.0.5:9042: set [cassandra] hosts and local_dc, then apply the "
        f"schema: {MIGRATE}"]
    output = "problem: keyspace telemetry lacks latest, readings: run schema/migrate\n"
    assert left_to_do.cassandra_left(output, MIGRATE) == [
        f"schema: keyspace telemetry lacks latest, readings: apply it: {MIGRATE}"]


def test_keys_handed_to_the_unit_by_a_drop_in_count_as_keys():
    drop_in = ("[Service]\nLoadCredential=keys:/etc/telemetry-gateway/keys\n"
               "Environment=TELEMETRY_SIGNING_KEYS_CREDENTIAL=keys\n")
    signing = left_to_do.signing_with_drop_ins({}, ["[Service]\nRestart=always\n", drop_in])
    assert signing == {"keys_credential": "keys"}
    assert left_to_do.keys_left(signing, lambda path: True) == []
    assert "does not exist" in left_to_do.keys_left(signing, lambda path: False)[0]
    assert left_to_do.signing_with_drop_ins({}, ["[Service]\nRestart=always\n"]) == {}
    assert left_to_do.signing_with_drop_ins({"keys_file": "/srv/keys"}, [drop_in]) == {"keys_file": "/srv/keys"}
