"""The gateway contract's behaviour vectors (gateway/contract/vectors/*.jsonl, format in gateway/contract/README.md)
run against the Python gateway: line assembly, sequence tracking, time stamping, write planning, the deferred
policy's hold rule and day marks.

Sequence and time cases go through the ingest's per-frame step (FrameAcceptor.accept: seq tracking, stamping and the
per-source counters exactly as the running gateway does them), on a real spool for the persisted receipt stamps."""

import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest

from telemetry_gateway.backoff import backoff_s
from telemetry_gateway.config import Config, DecodeConfig, TimeConfig
from telemetry_gateway.day_marks import DayMarks, mark_instant
from telemetry_gateway.frame import Frame
from telemetry_gateway.ingest import Ingest
from telemetry_gateway.latest_rows import LatestRows, latest_batches
from telemetry_gateway.line_assembler import LineAssembler
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.seq_tracker import REMEMBERED_SEQS
from telemetry_gateway.reading_values import pack_values
from telemetry_gateway.reopen_schedule import ReopenSchedule
from telemetry_gateway.spool import NewFrame, SpooledFrame, Spool
from telemetry_gateway.timestamps import DAY_MS
from telemetry_gateway.write_error_kinds import NoHostReachable, condition_name, kind_of
from telemetry_gateway.write_plan import plan_writes

VECTORS = Path(__file__).resolve().parents[2] / "contract" / "vectors"
# The per-source counters a frame may move (metric telemetry_gateway_<name>_total{source}).
PER_SOURCE_COUNTERS = ("duplicates", "seq_missing_frames", "board_restarts", "seq_conflicts", "frames_possibly_lost",
                       "explicit_time_refused")


def load(name):
    with open(VECTORS / name, encoding="ascii") as f:
        return [json.loads(line) for line in f]


def cases(name):
    loaded = load(name)
    return pytest.mark.parametrize("case", loaded, ids=[c["name"] for c in loaded])


def latin1(text: str) -> bytes:
    return text.encode("latin-1")  # one byte per character U+0000-U+00FF (README: "Bytes in JSON")


# --- line assembly ---------------------------------------------------------------------------------------------
@cases("lines.jsonl")
def test_lines(case):
    assembler = LineAssembler(case["params"]["max_line_bytes"])
    for number, step in enumerate(case["steps"]):
        if "read" in step:
            lines, too_long = assembler.feed(latin1(step["read"]))
            rejects = {"too_long": too_long}
        elif step.get("disconnect"):
            lines, rejects = [], {"partial_line": assembler.reset()}
        else:
            assert step.get("end"), step
            # End of input (LineHandler.finish): whatever is partial ends here.
            lines, too_long = assembler.feed(b"\n")
            rejects = {"too_long": too_long}
        got = {"lines": lines, "rejects": {reason: n for reason, n in rejects.items() if n}}
        want = {"lines": [latin1(line) for line in step["expect"]["lines"]], "rejects": step["expect"]["rejects"]}
        assert got == want, f"step {number}"


# --- sequence tracking and time stamping (the ingest's per-frame step) -----------------------------------------
@pytest.fixture
def spool(tmp_path):
    spool = Spool(tmp_path / "spool.sqlite")
    yield spool
    spool.close()


def ingest_for(params, spool):
    config = Config(decode=DecodeConfig(duplicate_window_s=params.get("duplicate_window_ms", 10_000) / 1000,
                                        max_sources=params.get("max_sources", 1000)),
                    time=TimeConfig(max_future_s=params.get("max_future_ms", 60_000) / 1000,
                                    max_age_days=params.get("max_age_ms", DAY_MS) / DAY_MS))
    return Ingest(config, spool, Metrics(), lambda: None)


def per_source_counts(ingest):
    counts = {}
    for family in ingest._metrics.registry.collect():
        name = family.name.removeprefix("telemetry_gateway_")
        if name in PER_SOURCE_COUNTERS:
            for sample in family.samples:
                if sample.name.endswith("_total") and sample.value:
                    counts[(name, sample.labels["source"])] = sample.value
    return counts


def accept(ingest, frame, received_ms):
    """The frame through the ingest: what it stored (or None) and the counters it moved, as {name: increment} for
    the frame's source (any other source's counter moving fails)."""
    before = per_source_counts(ingest)
    stored = ingest._acceptor.accept(frame, received_ms)
    after = per_source_counts(ingest)
    moved = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}
    assert all(source == frame.source for _, source in moved), moved
    return stored, {name: int(n) for (name, _), n in moved.items()}


@cases("sequence.jsonl")
def test_sequence(case, spool):
    params = case["params"]
    assert params["remembered_seqs"] == REMEMBERED_SEQS  # a contract number, not a setting
    # What an earlier run left in the spool's source_seqs, and whether it crashed.
    with sqlite3.connect(spool.path) as db:
        db.executemany("INSERT INTO source_seqs (source, seq, ts_ms) VALUES (?, ?, 0)",
                       params.get("persisted", {}).items())
    spool.unclean_stop = params.get("unclean", False)
    ingest = ingest_for(params, spool)
    contents = {}  # the vector's content labels → distinct frame values (equal label, equal content)
    for number, step in enumerate(case["steps"]):
        value = float(contents.setdefault(step["content"], len(contents)))
        frame = Frame.of("v1", step["source"], step["seq"], None, (("x", value),))
        stored, counts = accept(ingest, frame, step["received_ms"])
        assert {"stored": stored is not None, "counts": counts} == step["expect"], f"step {number}: {step}"


@cases("time.jsonl")
def test_time(case, spool):
    params = case["params"]
    spool.commit([], [], case.get("persisted", {}))  # what a previous run left in the spool
    ingest = ingest_for(params, spool)
    for number, step in enumerate(case["steps"]):
        if step.get("restart"):
            # As Ingest.run does at each commit: the receipt stamps given go into the spool; then a new gateway.
            spool.commit([], [], ingest._acceptor.stamper.take_changed())
            ingest = ingest_for(params, spool)
            continue
        read = step["read"]
        for index, vector_frame in enumerate(read["frames"]):
            frame = Frame.of("v1", vector_frame["source"], None, vector_frame["t"], (("x", float(index)),))
            stored, counts = accept(ingest, frame, read["received_ms"])
            assert stored is not None
            got = {"ts_ms": stored.ts_ms, "counts": counts}
            assert got == vector_frame["expect"], f"step {number}, frame {index}: {vector_frame}"


# --- write planning --------------------------------------------------------------------------------------------
def spooled(frame):
    values = tuple((metric, float(value)) for metric, value in frame["values"])
    return SpooledFrame(frame["id"], frame["source"], frame["ts_ms"], frame["ts_ms"], *pack_values(values))


def batch_vector(batch):
    return {"source": batch.source, "day": batch.day.isoformat(), "frames": [f.id for f in batch.frames],
            "rows": batch.rows}


def latest_vectors(rows):
    """The `latest` writes as sent: the statement's parameters (source, metric, ts, value, USING TIMESTAMP) read
    back from one UNLOGGED batch per source."""
    written = []
    for batch in latest_batches(rows, "%s|%s|%s|%s|%s"):  # a query text: the driver formats the parameters in
        assert batch.batch_type.name == "UNLOGGED"
        sources = set()
        for _, query, _ in batch._statements_and_parameters:
            source, metric, ts_ms, value, timestamp_us = query.split("|")
            sources.add(source)
            written.append({"source": source.strip("'"), "metric": metric.strip("'"), "ts_ms": int(ts_ms),
                            "value": float(value), "write_timestamp_us": int(timestamp_us)})
        assert len(sources) == 1  # one partition of `latest` per batch
    return sorted(written, key=lambda row: (row["source"], row["metric"]))


@cases("write_plan.jsonl")
def test_write_plan(case):
    latest = LatestRows()
    for number, chunk in enumerate(case["chunks"]):
        plan = plan_writes([spooled(frame) for frame in chunk["frames"]], case["params"]["batch_rows"])
        got = {"batches": [batch_vector(b) for b in plan.batches],
               "source_days": [[source, day.isoformat()] for source, day in plan.days]}
        assert got == chunk["expect"], f"chunk {number}"
        assert all(isinstance(day, date) for _, day in plan.days)
        latest.merge(plan.latest)  # as the sender does, chunk after chunk
    assert latest_vectors(latest.take()) == case["expect_latest"]


# --- the deferred policy's hold rule (a real spool on a scratch file, the clock given) --------------------------
@cases("hold.jsonl")
def test_hold(case, tmp_path):
    params = case["params"]
    spool = Spool(tmp_path / "spool.sqlite", fsync="deferred", hold_ms=params["hold_ms"])
    spool._policy._held._max_held = params["max_held"]
    try:
        accepted = 0
        for number, step in enumerate(case["steps"]):
            if "link" in step:
                spool.set_link(step["link"]["connected"], step["link"]["write_ok"])
                continue
            now = step["at_ms"] / 1000
            before = file_ids(spool)
            if "accept" in step:
                frames = [NewFrame.of("H", 1_780_000_000_000 + accepted + i, 0, (("n", accepted + i + 1.0),))
                          for i in range(step["accept"])]
                accepted += len(frames)
                spool.commit(frames, [tuple(step["ack"])] if "ack" in step else [], now=now)
            else:
                spool.commit([], [tuple(step["ack"])] if "ack" in step else [], now=now)
            after = file_ids(spool)
            got = {"committed": sorted(after - before), "held": sorted(f.id for f in spool._policy._held.take(0, 10**6)),
                   "file": sorted(after), "holding": spool.holding}
            assert got == step["expect"], f"step {number}: {step}"
    finally:
        spool.close()


def file_ids(spool) -> set[int]:
    with sqlite3.connect(spool.path) as db:
        return {row[0] for row in db.execute("SELECT id FROM frames")}


# --- day marks: which readings writes go, wait or need a mark (the clock given) ----------------------------------
@cases("day_marks.jsonl")
def test_day_marks(case):
    marks = DayMarks(fresh_s=case["params"]["mark_fresh_ms"] / 1000)
    started: list[list[tuple[str, date]]] = []  # mark writes by number: their days
    tokens: list[object] = []  # what the gateway would hold per mark write (its MarkWrite)
    sent_at: list[float] = []  # each mark write's latest attempt
    waiting: dict[int, list[tuple[str, date]]] = {}
    for number, step in enumerate(case["steps"]):
        now = step["at_ms"] / 1000
        if "write" in step:
            days = [(source, date.fromisoformat(day)) for source, day in step["write"]]
            unmarked, to_mark = marks.needs(days, now)
            if to_mark:
                started.append(to_mark)
                tokens.append(object())
                sent_at.append(now)
                marks.begin(to_mark, tokens[-1])
            for day in days:
                if day in unmarked:
                    waiting.setdefault(tokens.index(marks.pending(day)), []).append(day)
            got = {"send": [d for d in days if d not in unmarked], "wait": [d for d in days if d in unmarked],
                   "mark": to_mark}
        elif "attempt" in step:
            sent_at[step["attempt"]] = now
            bucket_ms, written_at_ms = mark_instant(step["wall_ms"])
            got = {"bucket_ms": bucket_ms, "written_at_ms": written_at_ms}
        else:
            n = step["acknowledged"]
            marks.acknowledged(tokens[n], started[n], sent_at[n], now)
            got = {"released": waiting.pop(n, [])}
        want = {key: [(source, date.fromisoformat(day)) for source, day in value] if isinstance(value, list)
                else value for key, value in step["expect"].items()}
        assert got == want, f"step {number}: {step}"


# --- the retry schedule and error kinds (cassandra-writes.md) -------------------------------------------------------
@cases("retry.jsonl")
def test_retry(case):
    for step in case["steps"]:
        delay_ms = backoff_s(step["failures"], case["params"]["retry_max_s"]) * 1000
        assert delay_ms == pytest.approx(step["expect"]["delay_ms"], abs=1e-6), f"after {step['failures']} failures"


@cases("serial_reopen.jsonl")
def test_serial_reopen(case):
    """serial.md: each attempt's outcome → the wait before the next."""
    params = case["params"]
    schedule = ReopenSchedule(lambda n: backoff_s(n, params["reopen_max_s"]), params["watch_ms"] / 1000)
    for n, step in enumerate(case["steps"]):
        wait_ms = schedule.wait_s(step["attempt"]) * 1000
        assert wait_ms == pytest.approx(step["expect"]["wait_ms"], abs=1e-6), f"attempt {n}: {step['attempt']}"


def condition(vector):
    """A vector's condition as kind_of takes it: a server error code, a condition's name, or no host reachable."""
    if "server_error" in vector:
        return int(vector["server_error"], 16)
    if "condition" in vector:
        return vector["condition"]
    return NoHostReachable(tuple(condition(host) for host in vector["no_host_reachable"]))


@cases("error_kinds.jsonl")
def test_error_kinds(case):
    assert kind_of(condition(case["condition"])) == case["expect"]["kind"]
    assert condition_name(condition(case["condition"])) == case["expect"]["name"]


def test_every_vector_file_is_driven():
    driven_here = {"lines.jsonl", "sequence.jsonl", "time.jsonl", "write_plan.jsonl", "hold.jsonl", "day_marks.jsonl",
                   "retry.jsonl", "error_kinds.jsonl", "serial_reopen.jsonl"}
    driven_elsewhere = {"log_fields.jsonl": "test_logs.py", "decode_text.jsonl": "test_decode_command.py",
                        "status_tally.jsonl": "test_status.py", "signing.jsonl": "test_signing.py",
                        "alerts.jsonl": "test_alerts.py", "http_requests.jsonl": "test_http_rules.py",
                        "reading_values.jsonl": "test_reading_values.py",
                        "metric_samples.jsonl": "test_metric_samples.py",
                        "spool_files.jsonl": "test_spool_files.py",
                        "frame_crc.jsonl": "test_spool_row_check.py", "spool_upgrade.jsonl": "test_spool_schema.py",
                        "log_rate_limit.jsonl": "test_logs.py", "status_series.jsonl": "test_status_series.py",
                        "healthz.jsonl": "test_status_series.py"}
    driven = driven_here | set(driven_elsewhere)
    assert {path.name for path in VECTORS.glob("*.jsonl")} == driven
