"""Per-source state is bounded: frames from ever new source names (noise that decodes, a misconfigured fleet)
cannot grow the gateway's memory. The ingest keeps the [decode] max_sources most recently seen sources; older ones
are forgotten everywhere (seqs, receipt stamps, per-source metric labels)."""

import logging
import tracemalloc

import pytest
from prometheus_client import generate_latest

from telemetry_gateway.config import Config, DecodeConfig
from telemetry_gateway.frame import Frame
from telemetry_gateway.ingest import Ingest
from telemetry_gateway.logs import MAX_SLOTS
from telemetry_gateway.metrics import Metrics
from telemetry_gateway.spool import Spool

NOW = 1_780_000_000_000
PER_SOURCE = ("duplicates_total", "seq_missing_frames_total", "board_restarts_total", "seq_conflicts_total",
              "explicit_time_refused_total")


@pytest.fixture
def make_ingest(tmp_path):
    spools = []

    def make(max_sources):
        spools.append(Spool(tmp_path / f"spool{len(spools)}.sqlite"))
        metrics = Metrics()
        config = Config(decode=DecodeConfig(max_sources=max_sources))
        return Ingest(config, spools[-1], metrics, lambda: None), metrics
    yield make
    for spool in spools:
        spool.close()


def junk(ingest, i, now):
    """Frames of source j<i> that touch every per-source counter: a duplicate, a gap, a restart, a conflict and a
    refused t."""
    source = f"j{i}"
    first = Frame.of("v1", source, 5, 1, (("a", float(i)),))  # t=1: implausible, stamped on receipt
    for frame in (first, first, Frame.of("v1", source, 9, None, (("a", 1.0),)),
                  Frame.of("v1", source, 0, None, (("a", 2.0),)), Frame.of("v1", source, 0, None, (("a", 3.0),)),
                  Frame.of("v1", source, 0, None, (("a", 4.0),))):
        ingest._acceptor.accept(frame, now)
    ingest._acceptor.accept(Frame.of("v1", source, 1, None, (("a", 5.0),)), now)
    ingest._acceptor.accept(Frame.of("v1", source, 1, None, (("a", 6.0),)), now)  # same seq, other value: a conflict


def samples(metrics, name):
    prefix = f"telemetry_gateway_{name}"
    return [line for line in generate_latest(metrics.registry).decode().splitlines() if line.startswith(prefix)]


def test_least_recently_seen_sources_are_forgotten_everywhere(make_ingest):
    ingest, metrics = make_ingest(max_sources=100)
    live = Frame.of("v1", "G", 0, None, (("a", 0.0),))
    for i in range(2_000):
        if i % 50 == 0:  # a real board, seen now and then: never the least recently seen of 100
            live = Frame.of("v1", "G", i // 50, None, (("a", float(i)),))
            assert ingest._acceptor.accept(live, NOW + i) is not None
        junk(ingest, i, NOW + i)
    assert len(ingest._acceptor.seq) == 100 and len(ingest._acceptor.stamper.sources()) <= 100
    for name in PER_SOURCE:
        assert 1 <= len(samples(metrics, name)) <= 100, name
    assert f'telemetry_gateway_duplicates_total{{source="j1999"}} 1.0' in samples(metrics, "duplicates_total")
    assert not any('source="j0"' in line for name in PER_SOURCE for line in samples(metrics, name))
    assert samples(metrics, "sources_tracked") == ["telemetry_gateway_sources_tracked 100.0"]
    assert samples(metrics, "sources_evicted_total") == [f"telemetry_gateway_sources_evicted_total {2001 - 100}.0"]
    # G kept its state: its last frame again is a duplicate, its next one in order.
    assert ingest._acceptor.accept(live, NOW + 2_000) is None
    assert ingest._acceptor.accept(Frame.of("v1", "G", live.seq + 1, None, (("a", 1.0),)), NOW + 2_001) is not None


def test_an_evicted_source_that_returns_starts_afresh_with_increasing_stamps(make_ingest):
    ingest, _ = make_ingest(max_sources=10)
    burst = [ingest._acceptor.accept(Frame.of("v1", "G", seq, None, (("a", 1.0),)), NOW).ts_ms for seq in range(20)]
    assert burst == list(range(NOW, NOW + 20))  # 20 frames in one ms: stamps ran ahead of the clock
    for i in range(10):
        junk(ingest, i, NOW + 1)
    assert "G" not in ingest._acceptor.recent
    back = ingest._acceptor.accept(Frame.of("v1", "G", 19, None, (("a", 1.0),)), NOW + 2)  # same seq and content as before
    assert back is not None  # forgotten: not taken for a duplicate
    assert back.ts_ms > burst[-1]  # and never a stamp it had before


def test_stamps_loaded_from_the_spool_are_bounded_and_evictable(tmp_path):
    spool = Spool(tmp_path / "s.sqlite")
    try:
        spool.commit([], [], {f"old{i}": NOW + i for i in range(50)})
        ingest = Ingest(Config(decode=DecodeConfig(max_sources=10)), spool, Metrics(), lambda: None)
        assert ingest._acceptor.stamper.sources() == [f"old{i}" for i in range(40, 50)]
        assert list(ingest._acceptor.recent) == ingest._acceptor.stamper.sources()
        for i in range(10):
            junk(ingest, i, NOW + 100)
        assert ingest._acceptor.stamper.sources() == [f"j{i}" for i in range(10)]
    finally:
        spool.close()


def test_junk_sources_do_not_grow_memory(make_ingest):
    ingest, _ = make_ingest(max_sources=200)
    logging.getLogger("telemetry_gateway").setLevel(logging.ERROR)  # pytest keeps log records in memory

    def feed(sources):
        for i in sources:
            junk(ingest, i, NOW + i)
            if i % 100 == 0:
                ingest._acceptor.stamper.take_changed()  # as Ingest.run does for every commit
        return tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    try:
        # Past the bound, and past every other cache (log keys, up to MAX_SLOTS per event; frame layouts): what is
        # alive now was allocated since tracing started, so the figures compare like with like.
        # Names of one length throughout (j10000...), so that no figure grows with the digits of a name.
        first, past = 10_000, 10_000 + MAX_SLOTS + 500
        settled = feed(range(first, past))
        after = feed(range(past, past + 5_000))
    finally:
        tracemalloc.stop()
        logging.getLogger("telemetry_gateway").setLevel(logging.NOTSET)
    # Unbounded (max_sources = 10**6) the 5,000 more sources took 19.3 MB here. Bounded, the tables of log keys (one
    # per event, MAX_SLOTS keys each) go on replacing keys, and a dict's table is resized in steps as keys come and
    # go: a moment can catch a dozen of them a step larger, a few hundred KiB, never more.
    assert after - settled < 1 << 20, f"{(after - settled) / 1e6:.1f} MB more after 5,000 more sources"
