"""A damaged spool never stops the farm (gateway/contract/spool.md, "A damaged spool"). Every gateway starts on each
file of a corpus of damaged spools made at test time (telemetry_conformance.damaged_spools: a zeroed page, a torn
page, a garbage header, the file cut to 60 %, 20 flipped bits, a damaged WAL) with real Cassandra, side by side.

Each gateway starts, drains every frame it could read to Cassandra as exactly its rows (every value and timestamp),
stores the frames sent after its start, logs spool_damaged with counts, exports the metrics and keeps the damaged
file aside, byte for byte. Allowed loss: only frames at risk (on the damaged pages, or in the WAL's transactions
from the damaged one on); for the damaged WAL exactly those (SQLite's own check of the WAL drops them, silently).
No frame is ever stored with a value or timestamp it did not have, except what SQLite cannot see (it keeps no
checksum of a row; spool.md, "Not detected"): a bit flipped inside a value, and the one row a torn page's tear
cuts through its values; at most one frame per flipped bit or torn page, and only frames at risk. `check` reports a damaged spool (exit 1) without changing it."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from telemetry_conformance import Board, GatewayUnderTest, Stream, stored_frames, utc_days_around_now, wait_for
from telemetry_conformance.commands import gateways_under_test
from telemetry_conformance.damaged_spools import FLIPS, KINDS, SIGNED_COUNTER, SIGNED_SOURCE, make, values_of
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # the test runs every gateway side by side itself
NEW_FRAMES = 20
ASIDE = re.compile(r"spool\.sqlite\.damaged-\d{8}T\d{6}Z")
FIGURES: list[str] = []


def test_a_damaged_spool_is_recovered_and_reading_goes_on(tmp_path, keyspace, cassandra_node, db, gateways):
    commands = gateways_under_test()
    for kind in KINDS:
        rigs = {}
        for name, command in commands.items():
            source = f"{kind}-{name}"
            damaged = make(kind, tmp_path / kind / name, source)
            board = Board(damaged.path.parent / "ttyUSB0")
            gateway = GatewayUnderTest.configure(damaged.path.parent, [board.link], keyspace, cassandra_node,
                                                 spool=damaged.path)
            gateways.append(gateway)
            rigs[name] = (command, source, damaged, damaged.damaged_bytes(), board, gateway)
        if kind == "zeroed_page":
            for name, (command, _source, damaged, before, _board, gateway) in rigs.items():
                assert_check_reports_damage(name, command, gateway, damaged.path, before)
        starts = [threading.Thread(target=gateway.start, kwargs={"command": command})
                  for command, _source, _damaged, _before, _board, gateway in rigs.values()]
        for thread in starts:
            thread.start()
        for thread in starts:
            thread.join()
        for name, (command, source, damaged, before, board, gateway) in rigs.items():
            new = Stream(source)
            t_base = next(iter(damaged.frames.values()))[0] - 10
            numbers = range(len(damaged.frames) + 1, len(damaged.frames) + NEW_FRAMES + 1)
            board.write(b"".join(new.frame(n, t=t_base + 10 * n, temp_in=n / 4 - 20, light=float(n % 101))
                                 for n in numbers))
        for name, (command, source, damaged, before, board, gateway) in rigs.items():
            check_gateway(kind, name, source, damaged, before, gateway, db)
    print("\n" + "\n".join(FIGURES))


def assert_check_reports_damage(name, command, gateway, path: Path, before: bytes) -> None:
    result = subprocess.run([*command, "check", "--config", str(gateway.config_path)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1, f"{name}: check exited {result.returncode}:\n{result.stdout}{result.stderr}"
    assert f"spool    {path}: DAMAGED" in result.stdout.splitlines(), f"{name}: {result.stdout}"
    assert f"problem: spool {path} is damaged (" in result.stderr, f"{name}: {result.stderr}"
    assert path.read_bytes() == before, f"{name}: check changed the spool file"


def check_gateway(kind, name, source, damaged, before, gateway, db) -> None:
    who = f"{name}, {kind} ({damaged.detail})"
    first_new = len(damaged.frames) + 1
    news = set(range(first_new, first_new + NEW_FRAMES))
    days = utc_days_around_now()
    wait_for(lambda: news <= stored_frames(db, source, days).keys(), 60, f"{who}: the frames sent after the start",
             interval=0.5)
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == 0, 30, f"{who}: the spool drained")
    damaged_total = gateway.metric("telemetry_gateway_spool_damaged_total")
    recovered_total = gateway.metric("telemetry_gateway_spool_recovered_frames_total")
    assert gateway.stop() == 0, f"{who}:\n{gateway.log()}"
    log = gateway.log()
    assert "Traceback" not in log and "stage_died" not in log, f"{who}:\n{log}"

    stored = stored_frames(db, source, days)
    t_base = next(iter(damaged.frames.values()))[0] - 10
    for n in news:
        assert stored.pop(n) == [(t_base + 10 * n, values_of(n))], f"{who}: new frame {n}"
    exact: set[int] = set()  # frames stored as they were
    corrupted: list[tuple[int, tuple]] = []  # rows stored with a value or time no frame had
    for n, entries in stored.items():
        for entry in entries:
            if n in damaged.frames and entry == damaged.frames[n] and n not in exact:
                exact.add(n)
            else:
                corrupted.append((n, entry))
    lost = set(damaged.frames) - exact
    assert lost <= damaged.at_risk, f"{who}: lost frames not at risk: {sorted(lost - damaged.at_risk)[:20]}"
    # Undetectable (spool.md, "Not detected"): a flipped bit in a value, and the row a tear cuts through its
    # values (read with zeros for the bytes lost). Frames at risk only, at most one per flip or per torn page.
    altered_at_most = {"bit_flips": FLIPS, "torn_page": 1}.get(kind, 0)
    assert len(corrupted) <= altered_at_most, f"{who}: frames stored with values or times they did not have: " \
                                              f"{corrupted[:10]}"

    lines = [line for line in log.splitlines() if "event=spool_damaged" in line]
    if kind == "damaged_wal":
        assert lost == damaged.at_risk, f"{who}: the WAL's damage dropped {len(lost)} frames, not its tail"
        assert not lines and damaged_total == 0, f"{who}: {lines}"
        assert "event=unclean_stop_detected" in log, who
    else:
        assert len(lines) == 1 and damaged_total == 1, f"{who}: {lines}, metric {damaged_total}"
        fields = dict(re.findall(r" (\w+)=(\"(?:[^\"\\]|\\.)*\"|\S+)", lines[0]))
        recovered = int(fields["frames_recovered"])
        assert recovered_total == recovered, f"{who}: metric {recovered_total}, line {lines[0]}"
        assert len(exact) <= recovered <= len(damaged.frames), f"{who}: {lines[0]}"
        if "frames_lost_at_most" in fields:
            assert len(damaged.frames) - recovered <= int(fields["frames_lost_at_most"]), f"{who}: {lines[0]}"
        [aside] = [path for path in damaged.path.parent.iterdir() if ASIDE.fullmatch(path.name)]
        assert fields["moved_to"] == str(aside), f"{who}: {lines[0]}"
        assert aside.read_bytes() == before, f"{who}: the damaged file aside is not the damaged file"
        counters = spool_counters(damaged.path)
        assert counters == {SIGNED_SOURCE: SIGNED_COUNTER} or fields["counters_complete"] == "false", (
            f"{who}: counters {counters}, line {lines[0]}")
    FIGURES.append(f"{kind:15} {name:7} at risk {len(damaged.at_risk):5}  lost {len(lost):5}  "
                   f"stored exact {len(exact):5}  stored altered {len(corrupted):3}  ({damaged.detail})")


def spool_counters(path: Path) -> dict[str, int]:
    """source_counters of a stopped gateway's spool, read from a copy (a connection would leave a -wal behind)."""
    copy = path.with_name("counters-copy.sqlite")
    shutil.copyfile(path, copy)
    connection = sqlite3.connect(copy)
    try:
        return dict(connection.execute("SELECT source, counter FROM source_counters"))
    finally:
        connection.close()
