"""gateway/contract/vectors/signing.jsonl against the verifier (signing.py), and the keys file's rules
(keys_file.py)."""

import json
import os
from pathlib import Path

import pytest

from telemetry_gateway.frame import Frame
from telemetry_gateway.keys_file import KeysFileError, parse_keys, read_keys
from telemetry_gateway.signed_frame import Signature
from telemetry_gateway.signing import SigningPolicy, Verifier, key_fingerprint

VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
CASES = [json.loads(line) for line in (VECTORS / "signing.jsonl").read_text(encoding="ascii").splitlines()]


def frame_of(vector: dict) -> Frame:
    signature = None
    if vector["format"] == "signed":
        signature = Signature(vector["counter"], bytes.fromhex(vector["signed"]), bytes.fromhex(vector["tag"]))
    return Frame.of(vector["format"], vector["source"], vector["seq"], vector["t"],
                    tuple((k, float(v)) for k, v in vector["values"]), signature)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_signing_vectors(case):
    params = case["params"]
    policy = SigningPolicy({source: bytes.fromhex(key) for source, key in params["keys"].items()},
                           frozenset(params["unsigned_allowed"]), params["must_sign"])
    stored = params.get("fingerprints", {})
    verifier = Verifier(policy, params["counters"], stored)
    for number, step in enumerate(case["steps"]):
        reason = verifier.verdict(frame_of(step["frame"]), step.get("trusted", False))
        assert (reason is None and step["expect"] == "accepted") or step["expect"] == {"reject": reason}, number
    assert verifier.counters == case["expect"]["counters"]
    if "rekeyed" in case["expect"]:
        assert [source for source, _ in verifier.rekeyed] == case["expect"]["rekeyed"]
    if "fingerprints" in case["expect"]:  # the rows once the changed counters are committed
        rows = {source: stored.get(source, "") for source in params["counters"]}
        rows.update({source: fingerprint for source, (_, fingerprint) in verifier.take_changed().items()})
        assert rows == case["expect"]["fingerprints"]


def test_a_fingerprint_is_of_the_key_and_never_the_key():
    assert key_fingerprint(bytes(range(16))) == "0ab3b852713a2854"
    assert key_fingerprint(bytes(16)) != key_fingerprint(bytes(range(16)))
    assert bytes(range(16)).hex()[:16] != key_fingerprint(bytes(range(16)))


def test_changed_counters_are_taken_once():
    case = CASES[0]  # one accepted signed frame
    verifier = Verifier(SigningPolicy({"node3": bytes.fromhex(case["params"]["keys"]["node3"])}), {"node4": 5})
    assert verifier.verdict(frame_of(case["steps"][0]["frame"])) is None
    assert verifier.take_changed() == {"node3": (1000, key_fingerprint(bytes(range(16))))}
    assert verifier.take_changed() == {}


@pytest.mark.parametrize(("text", "error"), [
    ("node3 000102030405060708090a0b0c0d0e0f\nnode3 000102030405060708090A0B0C0D0E0F\n",
     "line 2: source node3 has a key on an earlier line"),
    ("node3 000102030405060708090a0b0c0d0e\n", "line 1: not `<source> <32 hex digits>`"),
    ("# keys\n\nnode 3 000102030405060708090a0b0c0d0e0f\n", "line 3: not `<source> <32 hex digits>`"),
    ("node3 000102030405060708090a0b0c0d0e0f extra\n", "line 1: not `<source> <32 hex digits>`"),
    ("node\u00e9 000102030405060708090a0b0c0d0e0f\n", "line 1: not `<source> <32 hex digits>`"),
])
def test_malformed_keys_files_name_the_line_not_its_text(text, error):
    with pytest.raises(KeysFileError) as raised:
        parse_keys(text)
    assert str(raised.value) == error
    assert "0e0f" not in str(raised.value).lower()


def test_keys_file_comments_blanks_and_both_cases():
    text = "  # c\n\n\tnode1\t8F1C2D3E4A5B6C7D8E9FA0B1C2D3E4F5  \nG 00112233445566778899aabbccddeeff"
    assert parse_keys(text) == {"node1": bytes.fromhex("8f1c2d3e4a5b6c7d8e9fa0b1c2d3e4f5"),
                                "G": bytes.fromhex("00112233445566778899aabbccddeeff")}


def test_a_keys_file_readable_by_others_is_refused(tmp_path):
    path = tmp_path / "keys"
    path.write_text("node3 000102030405060708090a0b0c0d0e0f\n")
    os.chmod(path, 0o600)
    assert read_keys(str(path)) == {"node3": bytes(range(16))}
    for mode in (0o640, 0o604, 0o660):
        os.chmod(path, mode)
        with pytest.raises(KeysFileError, match=f"mode {mode:04o}: group or others may use it"):
            read_keys(str(path))
    with pytest.raises(KeysFileError, match="No such file"):
        read_keys(str(tmp_path / "absent"))


# --- the shell: keys from the config, verification in the ingest, counters in the spool -------------------------
KEY3 = "000102030405060708090a0b0c0d0e0f"


def config_with_keys(tmp_path, text=f"node3 {KEY3}\n", mode=0o600, **signing):
    from telemetry_gateway.config import Config, SigningConfig

    path = tmp_path / "keys"
    path.write_text(text)
    os.chmod(path, mode)
    return Config(signing=SigningConfig(**{"keys_file": str(path), **signing}))


@pytest.mark.parametrize(("text", "mode", "rule", "says"), [
    (f"node3 {KEY3}\n", 0o644, "unreadable", "mode 0644: group or others may use it"),
    (f"node3 {KEY3[:-1]}\n", 0o600, "syntax", "line 1: not `<source> <32 hex digits>`"),
    (f"node3 {KEY3}\nnode3 {KEY3}\n", 0o400, "distinct", "line 2: source node3 has a key on an earlier line"),
])
def test_an_unusable_keys_file_is_a_config_error_without_the_key(tmp_path, text, mode, rule, says):
    from telemetry_gateway.config_error import ConfigError
    from telemetry_gateway.signing_config import signing_policy

    with pytest.raises(ConfigError) as raised:
        signing_policy(config_with_keys(tmp_path, text, mode))
    assert (raised.value.key, raised.value.rule) == ("signing.keys_file", rule)
    assert says in str(raised.value) and KEY3[:8] not in str(raised.value)


def test_keys_from_a_systemd_credential(tmp_path):
    from telemetry_gateway.config import Config, SigningConfig
    from telemetry_gateway.config_error import ConfigError
    from telemetry_gateway.signing_config import signing_policy

    config_with_keys(tmp_path)  # writes tmp_path/keys
    config = Config(signing=SigningConfig(keys_credential="keys", must_sign="all"))
    policy = signing_policy(config, env={"CREDENTIALS_DIRECTORY": str(tmp_path)})
    assert policy.keys == {"node3": bytes(range(16))} and policy.must_sign == "all"
    with pytest.raises(ConfigError, match=r"at signing.keys_credential \[unreadable\]: CREDENTIALS_DIRECTORY"):
        signing_policy(config, env={})


def test_verdicts_count_as_rejects_and_counters_survive_a_restart(tmp_path):
    from telemetry_gateway.ingest import Ingest
    from telemetry_gateway.metrics import Metrics
    from telemetry_gateway.spool import Spool

    config = config_with_keys(tmp_path)
    good = frame_of(CASES[0]["steps"][0]["frame"])  # node3, counter 1000
    forged = good._replace(signature=good.signature._replace(tag=bytes(6)))
    now = 1_780_000_000_000
    spool, metrics = Spool(tmp_path / "spool.sqlite"), Metrics()
    try:
        ingest = Ingest(config, spool, metrics, lambda: None)
        accept = ingest._acceptor.accept
        assert accept(forged, now) is None
        assert accept(Frame.of("v1", "node3", 1, None, (("a", 1.0),)), now) is None
        new = accept(good, now)
        assert new is not None and new.metrics == "temp_in,vbat"
        assert accept(good, now + 1) is None
        ingest._commit([new], [], {}, stopping=False)
        rejects = {reason: metrics.registry.get_sample_value("telemetry_gateway_rejects_total", {"reason": reason})
                   for reason in ("bad_mac", "unsigned", "replay")}
        assert rejects == {"bad_mac": 1.0, "unsigned": 1.0, "replay": 1.0}
    finally:
        spool.close()
    spool = Spool(tmp_path / "spool.sqlite")
    try:
        assert spool.last_counters() == {"node3": 1000}
        ingest = Ingest(config, spool, Metrics(), lambda: None)
        assert ingest._acceptor.accept(good._replace(seq=0), now + 5) is None  # a replay after the restart
    finally:
        spool.close()


def test_counters_go_into_the_transaction_of_their_frames(tmp_path):
    import sqlite3

    from telemetry_gateway.spool import NewFrame, Spool

    spool = Spool(tmp_path / "spool.sqlite", fsync="batch")
    try:
        spool.commit([NewFrame.of("node3", 1, 1, (("a", 1.0),))], [], counters={"node3": (7, "0ab3b852713a2854")})
        # a commit of counters alone (deferred's held frames)
        spool.commit([], [], counters={"node3": (9, "0ab3b852713a2854")})
    finally:
        spool.close()
    db = sqlite3.connect(tmp_path / "spool.sqlite")
    assert db.execute("SELECT source, counter, key_fingerprint FROM source_counters").fetchall() == [
        ("node3", 9, "0ab3b852713a2854")]
    assert db.execute("SELECT count(*) FROM frames").fetchone() == (1,)
    db.close()


FORMAT_4 = """
CREATE TABLE frames (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, ts_ms INTEGER NOT NULL,
                     received_ms INTEGER NOT NULL, metrics TEXT NOT NULL, vals BLOB NOT NULL);
CREATE TABLE receipt_stamps (source TEXT PRIMARY KEY, last_ts_ms INTEGER NOT NULL);
CREATE TABLE source_seqs (source TEXT PRIMARY KEY, seq INTEGER NOT NULL, ts_ms INTEGER NOT NULL);
CREATE TABLE source_counters (source TEXT PRIMARY KEY, counter INTEGER NOT NULL);
INSERT INTO source_counters VALUES ('node3', 1000), ('node9', 5);
PRAGMA user_version = 4;
"""


def test_a_format_4_spool_keeps_its_counters_bound_to_the_key_at_the_next_start(tmp_path):
    """spool.md, "Upgrading": the column and the version in one step; signing.md: a row without a fingerprint is
    the current key's (no counter goes back), written with it by the first commit."""
    import sqlite3

    from telemetry_gateway.ingest import Ingest
    from telemetry_gateway.metrics import Metrics
    from telemetry_gateway.spool import Spool
    from telemetry_gateway.spool.schema import FORMAT_VERSION

    path = tmp_path / "spool.sqlite"
    old = sqlite3.connect(path)
    old.executescript(FORMAT_4)
    old.close()
    spool = Spool(path, fsync="batch")
    try:
        assert spool.last_counter_keys() == {"node3": "", "node9": ""}
        ingest = Ingest(config_with_keys(tmp_path), spool, Metrics(), lambda: None)
        good = frame_of(CASES[0]["steps"][0]["frame"])  # node3, counter 1000: a replay under the unchanged key
        assert ingest._acceptor.accept(good, 1) is None
        ingest._commit([], [], {}, stopping=False)
    finally:
        spool.close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (FORMAT_VERSION,)  # and every later format's step
    assert db.execute("SELECT * FROM source_counters ORDER BY source").fetchall() == [
        ("node3", 1000, key_fingerprint(bytes(range(16)))), ("node9", 5, "")]
    db.close()


def test_a_changed_key_starts_the_counter_afresh_and_says_so_once(tmp_path, caplog):
    import logging

    from telemetry_gateway.ingest import Ingest
    from telemetry_gateway.metrics import Metrics
    from telemetry_gateway.spool import Spool

    good = frame_of(CASES[0]["steps"][0]["frame"])  # node3, counter 1000, signed with KEY3
    spool = Spool(tmp_path / "spool.sqlite", fsync="batch")
    caplog.set_level(logging.INFO, logger="telemetry_gateway")
    try:
        Ingest(config_with_keys(tmp_path), spool, Metrics(), lambda: None)
        assert "event=signing_counters_empty keys=1 " in caplog.text
        caplog.clear()
        spool.commit([], [], counters={"node3": (5000, "00112233445566aa")})  # a counter of an older key
        ingest = Ingest(config_with_keys(tmp_path), spool, Metrics(), lambda: None)
        err = caplog.text
        assert err.count("event=signing_counter_rekeyed source=node3 counter=5000 ") == 1, err
        assert "signing_counters_empty" not in err
        assert ingest._acceptor.accept(good, 1) is not None  # counter 1000 < 5000, but under the new key
        ingest._commit([], [], {}, stopping=False)
        assert spool.last_counters() == {"node3": 1000}
        assert spool.last_counter_keys() == {"node3": key_fingerprint(bytes(range(16)))}
    finally:
        spool.close()


def test_the_counters_command_resets_only_a_counter_of_another_key():
    from telemetry_gateway.counters_command import key_state, reset_verdict

    keys = {"node3": bytes(range(16))}
    current = key_fingerprint(bytes(range(16)))
    assert key_state("node3", current, keys) == "current"
    assert key_state("node3", "00112233445566aa", keys) == "other"
    assert key_state("node3", "", keys) == "unbound"
    assert key_state("node9", current, keys) == "none"
    assert [reset_verdict("node3", 7, state)[0] for state in ("current", "unbound", "other", "none")] == [
        False, False, True, True]
    assert "Re-key the node" in reset_verdict("node3", 7, "current")[1] and "above 7" in reset_verdict(
        "node3", 7, "current")[1]
