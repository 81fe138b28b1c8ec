"""Gateway conformance (gateway/contract/signing.md, "Trusted inputs"): once keys exist, only keyed boards speak on a
radio input. An attacker on the air sends frost-cold readings under a name nobody keyed, and frost-cold readings
under a keyed board's name (a wrong key, and unsigned): each is refused (`unsigned`, `bad_mac`), stores no row,
raises no alert and runs no command, and the attacker's name never reaches the status page (the keyed board's card
flags the burst). Beside it the genuine
keyed board's signed frames, a board on a port marked trusted sending unsigned frames, and a board named in
unsigned_allowed are stored. The frost rule (every source, no delay) then fires for a real cold reading of the
trusted board: the rule was armed all along. Every gateway under test side by side."""

from __future__ import annotations

import os
import shlex
import sys

import pytest

from telemetry_conformance import Board, GatewayUnderTest, Stream, gateways_under_test, toml_value, wait_for
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)
from test_frost_night_alerts import RECORD, frost
from test_signed_frames import KEY, OTHER_KEY, rejects, signed_frame, temps

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side


def firing(gateway) -> float:
    """Every alerts_firing series summed: 0 while nothing fires."""
    return sum(value for (name, _), value in (gateway.metrics_or_none() or {}).items()
               if name == "telemetry_gateway_alerts_firing")


def test_an_attacker_on_the_air_stores_nothing_and_fires_nothing(db, keyspace, cassandra_node, gateways, tmp_path,
                                                                  monkeypatch):  # noqa: F811
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    out = tmp_path / "alerts"
    out.mkdir()
    names = list(gateways_under_test())
    nodes = {name: 10 * i + 3 for i, name in enumerate(names)}  # node n: the keyed radio board
    keys = tmp_path / "keys"
    keys.write_text("".join(f"node{n} {KEY.hex()}\n" for n in nodes.values()))
    os.chmod(keys, 0o600)
    allowed = [f"migrating-{name}" for name in names]
    rigs = {}
    for name, command in gateways_under_test().items():
        folder = tmp_path / name
        folder.mkdir()
        radio, wired = Board(folder / "ttyUSB0"), Board(folder / "ttyACM0")
        extra = frost([sys.executable, str(script), str(out)], for_s=0.0) + (
            f'\n[signing]\nkeys_file = "{keys}"\nunsigned_allowed = {toml_value(allowed)}\n')
        gateway = GatewayUnderTest.configure(folder, [radio.link, {"path": wired.link, "trusted": True}], keyspace,
                                             cassandra_node, extra=extra)
        gateways.append(gateway)
        monkeypatch.setenv("GATEWAY_COMMAND", shlex.join(command))
        gateway.start()
        rigs[name] = (radio, wired, gateway)

    for name, (radio, wired, _) in rigs.items():
        n = nodes[name]
        intruder, impostor = Stream(f"intruder-{name}"), Stream(f"node{n}")
        radio.write(b"".join(intruder.frame(i, temp_in=-5.0) for i in range(3))  # a name nobody keyed
                    + b"".join(signed_frame(n, -5, 900 + i, 7 + i, key=OTHER_KEY)  # the keyed board's name,
                               for i in range(4))  # a guessed key
                    + impostor.frame(8, temp_in=-5.0)  # the keyed board's name, unsigned
                    + signed_frame(n, 10, 100, 0) + signed_frame(n, 11, 101, 1)  # the genuine board
                    + Stream(f"migrating-{name}").frame(0, temp_in=14.0))  # named in unsigned_allowed
        wired.write(b"".join(Stream(f"wired-{name}").frame(i, temp_in=12.0 + i) for i in range(2)))

    for name, (_, _, gateway) in rigs.items():
        wait_for(lambda: rejects(gateway) == {"bad_mac": 4, "replay": 0, "unsigned": 4}, 20, f"{name}: rejects")
        wait_for(lambda: temps(db, f"node{nodes[name]}") == [10.0, 11.0], 20, f"{name}: the keyed board's rows")
        wait_for(lambda: temps(db, f"wired-{name}") == [12.0, 13.0], 20, f"{name}: the trusted port's rows")
        wait_for(lambda: temps(db, f"migrating-{name}") == [14.0], 20, f"{name}: the named board's row")
        assert temps(db, f"intruder-{name}") == [], name
        # Refused frames reach no alert state: nothing raised, nothing firing, no command run.
        assert "event=alert_raised" not in gateway.log(), name
        assert firing(gateway) == 0, name
        assert list(out.iterdir()) == [], name
        # Forged names do not grow the page: the keyed board shows its refusals, the intruder is not listed; five
        # refused within 5 minutes flag a burst on the keyed board's card (status.md, refused_burst).
        sources = {entry["source"]: entry for entry in gateway.status()["sources"]}
        assert {source: entry["rejects"] for source, entry in sources.items()} == {
            f"node{nodes[name]}": {"bad_mac": 4, "unsigned": 1}, f"migrating-{name}": {}, f"wired-{name}": {}}, name
        assert {source: entry["refused_burst"] for source, entry in sources.items()} == {
            f"node{nodes[name]}": True, f"migrating-{name}": False, f"wired-{name}": False}, name

    for name, (_, wired, _) in rigs.items():  # a real frost on the trusted board: the rule was armed all along
        wired.write(Stream(f"wired-{name}").frame(2, temp_in=1.0))
    for name, (_, _, gateway) in rigs.items():
        record = out / f"wired-{name}.log"
        wait_for(lambda: record.exists() and record.read_text().startswith("frost firing below temp_in 1 2 "), 15,
                 f"{name}: frost raised for the trusted board")
        assert firing(gateway) == 1, name
        log = gateway.log()
        assert log.count("event=alert_raised ") == 1 and f"source=wired-{name} " in log, name
        assert gateway.stop() == 0, name
    assert sorted(path.name for path in out.iterdir()) == sorted(f"wired-{name}.log" for name in rigs)
