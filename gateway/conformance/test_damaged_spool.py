"""A damaged spool never stops the farm (gateway/contract/spool.md, "A damaged spool"). Every gateway starts on each
file of a corpus of damaged spools made at test time (telemetry_conformance.damaged_spools: a zeroed page, a torn
page, a garbage header, the file cut to 60 %, 20 flipped bits, 20 bits flipped inside values, a damaged WAL) with
real Cassandra, side by side.

Each gateway starts, drains every frame it could read to Cassandra as exactly its rows (every value and timestamp),
stores the frames sent after its start, logs spool_damaged with counts, exports the metrics and keeps the damaged
file aside, byte for byte. Allowed loss: only frames at risk (on the damaged pages, or in the WAL's transactions
from the damaged one on); for the damaged WAL exactly those (SQLite's own check of the WAL drops them, silently).
No frame is ever stored with a value or timestamp it did not have: what SQLite cannot see (a bit flipped inside a
value, the row a torn page's tear cuts through its values) fails the row's checksum (spool.md, "Row checksums")
and is counted in telemetry_gateway_spool_invalid_frames_total, at the recovery or when the sender reads it.
`check` (process.md) reports a damaged spool, the exact number of frames failing their checksum in a spool SQLite
finds sound, and a spool of a newer format, each with exit 1 and without changing the file. Every kind and gateway
runs at once, so the waits overlap."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from telemetry_conformance import Board, GatewayUnderTest, Stream, stored_frames, utc_days_around_now, wait_for
from telemetry_conformance.commands import gateways_under_test
from telemetry_conformance.damaged_spools import (KINDS, SIGNED_COUNTER, SIGNED_SOURCE, DamagedSpool, make, values_of,
                                                   write_spool)
from telemetry_conformance.scenario_fixtures import db, gateways, keyspace  # noqa: F401 (fixtures)

pytestmark = pytest.mark.cassandra
EVERY_GATEWAY_INSIDE = True  # the test runs every gateway side by side itself
NEW_FRAMES = 20
ASIDE = re.compile(r"spool\.sqlite\.damaged-\d{8}T\d{6}Z")
SPOOL_FORMAT = int(re.search(r"^PRAGMA user_version = (\d+);$", (Path(__file__).resolve().parents[1] / "contract"
                                                                  / "spool.sql").read_text(), re.M).group(1))
FIGURES: list[str] = []


@dataclass
class Rig:
    kind: str
    name: str  # the gateway's
    command: list[str]
    source: str
    damaged: DamagedSpool
    before: bytes  # the damaged file's bytes
    board: Board
    gateway: GatewayUnderTest
    metrics: dict[str, float] = field(default_factory=dict)
    status: int | None = None  # the exit status of its stop


def in_threads(call, rigs: list[Rig]) -> None:
    threads = [threading.Thread(target=call, args=(rig,)) for rig in rigs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_a_damaged_spool_is_recovered_and_reading_goes_on(tmp_path, keyspace, cassandra_node, db, gateways):
    rigs = []
    for kind in KINDS:  # every kind and gateway at once: the waits overlap
        for name, command in gateways_under_test().items():
            source = f"{kind}-{name}"
            damaged = make(kind, tmp_path / kind / name, source)
            board = Board(damaged.path.parent / "ttyUSB0")
            gateway = GatewayUnderTest.configure(damaged.path.parent, [board.link], keyspace, cassandra_node,
                                                 spool=damaged.path)
            gateways.append(gateway)
            rigs.append(Rig(kind, name, command, source, damaged, damaged.damaged_bytes(), board, gateway))
    for rig in rigs:
        if rig.kind == "zeroed_page":
            assert_check_reports_damage(rig)
        if rig.kind == "value_bits":
            assert_check_reports_failing_checksums(rig)
    assert_check_reports_a_newer_format(tmp_path / "newer", keyspace, cassandra_node)
    in_threads(lambda rig: rig.gateway.start(command=rig.command), rigs)
    for rig in rigs:
        t_base = rig.damaged.frames[1][0] - 10
        numbers = range(len(rig.damaged.frames) + 1, len(rig.damaged.frames) + NEW_FRAMES + 1)
        stream = Stream(rig.source)
        rig.board.write(b"".join(stream.frame(n, t=t_base + 10 * n, temp_in=n / 4 - 20, light=float(n % 101))
                                 for n in numbers))
    for rig in rigs:
        wait_drained(rig, db)

    def stop(rig: Rig) -> None:
        rig.status = rig.gateway.stop()
    in_threads(stop, rigs)
    for rig in rigs:
        check_rig(rig, db)
    print("\n" + "\n".join(FIGURES))


def assert_check_reports_damage(rig: Rig) -> None:
    name, path = rig.name, rig.damaged.path
    result = check_spool(rig.command, rig.gateway.config_path, path, name)
    assert f"spool    {path}: DAMAGED" in result.stdout.splitlines(), f"{name}: {result.stdout}"
    assert f"problem: spool {path} is damaged (" in result.stderr, f"{name}: {result.stderr}"


def check_spool(command: list[str], config: Path, path: Path, name: str) -> subprocess.CompletedProcess:
    """`check` with this config, which must exit 1 and leave the spool file (and its folder) as it was."""
    before = {file.name: file.read_bytes() for file in path.parent.iterdir() if file.is_file()}
    result = subprocess.run([*command, "check", "--config", str(config)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, f"{name}: check exited {result.returncode}:\n{result.stdout}{result.stderr}"
    after = {file.name: file.read_bytes() for file in path.parent.iterdir() if file.is_file()}
    assert after == before, f"{name}: check changed the spool's folder"
    return result


def assert_check_reports_failing_checksums(rig: Rig) -> None:
    """SQLite's quick check passes; check reads every row and counts exactly the frames whose bits were flipped."""
    name, path, failing = rig.name, rig.damaged.path, len(rig.damaged.failing)
    result = check_spool(rig.command, rig.gateway.config_path, path, name)
    line = f"spool    {path}: CHECKSUM FAILING in {failing} of {len(rig.damaged.frames)} frames"
    assert line in result.stdout.splitlines(), f"{name}: {result.stdout}"
    assert result.stderr == (f"problem: spool {path} holds {failing} frame(s) whose checksum fails: they are never "
                             "sent; the gateway deletes them as it reaches them and counts them in "
                             "telemetry_gateway_spool_invalid_frames_total\n"), f"{name}: {result.stderr}"
    assert result.stdout.endswith("check: 1 problem(s)\n"), f"{name}: {result.stdout}"


def assert_check_reports_a_newer_format(folder: Path, keyspace: str, cassandra_node: str) -> None:
    """A sound spool whose user_version is one above the contract's: check says so, as a start would refuse it."""
    for name, command in gateways_under_test().items():
        path = folder / name / "spool.sqlite"
        path.parent.mkdir(parents=True)
        write_spool(path, "NEWER-1", 1_700_000_000_000, count=10)
        connection = sqlite3.connect(path)
        connection.execute(f"PRAGMA user_version = {SPOOL_FORMAT + 1}")
        connection.close()
        gateway = GatewayUnderTest.configure(path.parent, [], keyspace, cassandra_node, spool=path)
        result = check_spool(command, gateway.config_path, path, name)
        line = f"spool    {path}: NEWER FORMAT {SPOOL_FORMAT + 1} (this gateway reads up to {SPOOL_FORMAT})"
        assert line in result.stdout.splitlines(), f"{name}: {result.stdout}"
        assert result.stderr == (f"problem: spool {path} is of format {SPOOL_FORMAT + 1}, newer than this gateway "
                                 f"reads ({SPOOL_FORMAT}): run the newer gateway, or move the file aside\n"), (
            f"{name}: {result.stderr}")


def wait_drained(rig: Rig, db) -> None:
    """Until the frames sent after the start are in Cassandra and the spool is empty; then its metrics."""
    who, gateway = f"{rig.name}, {rig.kind}", rig.gateway
    first_new = len(rig.damaged.frames) + 1
    news = set(range(first_new, first_new + NEW_FRAMES))
    days = utc_days_around_now()
    wait_for(lambda: news <= stored_frames(db, rig.source, days).keys(), 60, f"{who}: the frames sent after the start",
             interval=0.5)
    wait_for(lambda: gateway.metric("telemetry_gateway_spool_frames") == 0, 30, f"{who}: the spool drained")
    for name in ("spool_damaged_total", "spool_recovered_frames_total", "spool_invalid_frames_total"):
        rig.metrics[name] = gateway.metric(f"telemetry_gateway_{name}")


def check_rig(rig: Rig, db) -> None:
    kind, name, source, damaged, before, gateway = rig.kind, rig.name, rig.source, rig.damaged, rig.before, rig.gateway
    who = f"{name}, {kind} ({damaged.detail})"
    first_new = len(damaged.frames) + 1
    news = set(range(first_new, first_new + NEW_FRAMES))
    days = utc_days_around_now()
    damaged_total = rig.metrics["spool_damaged_total"]
    recovered_total = rig.metrics["spool_recovered_frames_total"]
    log = gateway.log()
    assert rig.status == 0, f"{who}: exit status {rig.status}:\n{log}"
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
    # The row checksums catch what SQLite cannot see: a flipped bit in a value, the row a tear cuts through.
    assert not corrupted, f"{who}: frames stored with values or times they did not have: {corrupted[:10]}"
    invalid_total = rig.metrics["spool_invalid_frames_total"]
    read_damaged = "event=spool_frame_damaged" in log  # rows failing their checksum when the sender read them

    lines = [line for line in log.splitlines() if "event=spool_damaged" in line]
    if kind == "value_bits":  # SQLite finds the file sound: no recovery, the sender drops exactly those rows
        assert lost == damaged.failing, f"{who}: lost {sorted(lost)}, failing {sorted(damaged.failing)}"
        assert not lines and damaged_total == 0, f"{who}: {lines}"
        assert invalid_total == len(damaged.failing) and read_damaged, f"{who}: invalid frames {invalid_total}"
    elif kind == "damaged_wal":
        assert lost == damaged.at_risk, f"{who}: the WAL's damage dropped {len(lost)} frames, not its tail"
        assert not lines and damaged_total == 0, f"{who}: {lines}"
        assert (invalid_total > 0) == read_damaged, f"{who}: invalid frames {invalid_total}"
        assert "event=unclean_stop_detected" in log, who
    else:
        assert len(lines) == 1 and damaged_total == 1, f"{who}: {lines}, metric {damaged_total}"
        fields = dict(re.findall(r" (\w+)=(\"(?:[^\"\\]|\\.)*\"|\S+)", lines[0]))
        recovered = int(fields["frames_recovered"])
        assert recovered_total == recovered, f"{who}: metric {recovered_total}, line {lines[0]}"
        line_invalid = int(fields["frames_invalid"])
        assert invalid_total >= line_invalid and (invalid_total > line_invalid) == read_damaged, (
            f"{who}: invalid frames {invalid_total}, line {lines[0]}")
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
                   f"stored exact {len(exact):5}  stored altered {len(corrupted):3}  invalid {invalid_total:3.0f}  "
                   f"({damaged.detail})")


def spool_counters(path: Path) -> dict[str, int]:
    """source_counters of a stopped gateway's spool, read from a copy (a connection would leave a -wal behind)."""
    copy = path.with_name("counters-copy.sqlite")
    shutil.copyfile(path, copy)
    connection = sqlite3.connect(copy)
    try:
        return dict(connection.execute("SELECT source, counter FROM source_counters"))
    finally:
        connection.close()
