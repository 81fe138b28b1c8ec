"""SafeSeqs: a source's seq is stored only once it and every frame before it are safe (spool.md)."""

from telemetry_gateway.spool.safe_seqs import ROWS_ALONE_S, ROWS_INTERVAL_S, SafeSeqs


def test_a_group_is_writable_only_once_nothing_at_or_below_its_highest_id_is_held():
    seqs = SafeSeqs()
    seqs.accepted(3, {"A": (7, 100)})
    seqs.accepted(5, {"A": (9, 120), "B": (1, 110)})
    seqs.release(lowest_held_id=3)
    assert seqs.rows() == {}
    seqs.release(lowest_held_id=4)
    assert seqs.rows() == {"A": (7, 100)}
    seqs.release(lowest_held_id=None)
    assert seqs.rows() == {"A": (9, 120), "B": (1, 110)}
    seqs.written()
    assert seqs.rows() == {}


def test_writable_rows_ride_with_a_commit_an_interval_after_the_last_write_and_go_alone_later():
    assert ROWS_INTERVAL_S < ROWS_ALONE_S
    seqs = SafeSeqs(stored=["A"])
    assert seqs.due_s(last_written_at=0.0, now=100.0, riding=True) == float("inf")
    seqs.accepted(1, {"A": (1, 1)})
    seqs.release(None)
    assert seqs.due_s(last_written_at=10.0, now=11.0, riding=True) == ROWS_INTERVAL_S - 1
    assert seqs.due_s(last_written_at=10.0, now=10.0 + ROWS_INTERVAL_S, riding=True) <= 0
    assert seqs.due_s(last_written_at=10.0, now=10.0 + ROWS_INTERVAL_S) == ROWS_ALONE_S - ROWS_INTERVAL_S
    assert seqs.due_s(last_written_at=10.0, now=10.0 + ROWS_ALONE_S) <= 0


def test_frames_without_seqs_change_nothing():
    seqs = SafeSeqs()
    seqs.accepted(4, {})
    seqs.release(None)
    assert seqs.rows() == {}


def test_a_source_without_a_stored_row_has_it_written_as_soon_as_it_is_writable():
    """Else a crash in its first minute (before the rows' interval) would leave nothing to count its losses from."""
    seqs = SafeSeqs(stored=["A"])
    seqs.accepted(1, {"B": (5, 100)})
    assert seqs.due_s(last_written_at=10.0, now=11.0) == float("inf")  # held: not safe yet
    seqs.release(None)
    assert seqs.due_s(last_written_at=10.0, now=11.0) <= 0  # due at once, riding or alone
    seqs.written()
    seqs.accepted(2, {"B": (6, 101)})
    seqs.release(None)
    assert seqs.due_s(last_written_at=11.0, now=12.0) == ROWS_ALONE_S - 1  # stored now: the interval again
    seqs.accepted(3, {"A": (9, 102)})
    seqs.release(None)
    assert seqs.due_s(last_written_at=11.0, now=12.0, riding=True) == ROWS_INTERVAL_S - 1  # a stored source
