"""A WAL that holds the disk (gateway/contract/spool.md, "Full disk" and "A clean stop"): pages past the database
file's end can only be checkpointed by growing the file, which a full disk refuses; the reserve's room lets the
checkpoint through, so a stop leaves no WAL, and a WAL a clean stop did leave is not taken for a crash."""

import shutil

from conftest import fill_disk

from telemetry_gateway.spool import DRAIN_RESERVE_BYTES, NewFrame, Spool


def frames(n, start=0):
    return [NewFrame.of("W", 1_000 + i, 2_000 + i, (("n", float(i)), ("temp_in", i / 10)))
            for i in range(start, start + n)]


def wal(path):
    return path.with_name(path.name + "-wal")


def test_a_wal_past_the_file_end_on_a_full_disk_is_cut_at_the_stop(small_tmpfs):
    path = small_tmpfs / "spool.sqlite"
    spool = Spool(path)
    for i in range(20):  # no checkpoint: the WAL holds every new page, the database file none of them
        spool.commit(frames(500, start=i * 500), [])
    assert wal(path).stat().st_size > 500 << 10 and path.stat().st_size < 64 << 10
    filler = fill_disk(small_tmpfs)
    assert spool.close() == 0
    assert not wal(path).exists(), "the stop's checkpoint got the reserve's room"
    assert path.with_name("spool.sqlite.clean-stop").exists()
    fill_disk(small_tmpfs)  # what the cut WAL gave back

    reopened = Spool(path)
    assert not reopened.unclean_stop and not path.with_name("spool.sqlite.clean-stop").exists()
    taken = reopened.take(0, 10**6)
    assert [f.vals for f in taken] == [f.vals for f in frames(10_000)]
    reopened.commit([], [(taken[0].id, taken[-1].id)])  # the disk still full: acknowledged frames leave
    assert reopened.depth == 0
    filler.unlink()
    assert reopened.room() is None
    assert path.stat().st_size < 64 << 10, "a drained spool gives its pages back before reading resumes"
    reopened.close()


def test_a_low_disk_cuts_the_wal_after_every_commit_and_keeps_the_last_part(small_tmpfs):
    path = small_tmpfs / "spool.sqlite"
    spool = Spool(path)
    fill_disk(small_tmpfs)
    spool.commit(frames(2000), [])  # refused, then given the reserve's first part
    assert spool.disk_low and spool.room() == "disk"
    assert wal(path).stat().st_size == 0
    assert spool.reserve_path.stat().st_size == DRAIN_RESERVE_BYTES
    spool.stopping()  # at a stop the frames already read take the last part too
    spool.commit(frames(200, start=2000), [])
    assert spool.close() == 0 and not wal(path).exists()
    assert Spool(path).depth == 2200


def test_only_a_wal_without_the_clean_stop_marker_is_an_unclean_stop(tmp_path):
    path = tmp_path / "spool.sqlite"
    spool = Spool(path)
    spool.commit(frames(10), [])
    for name in ("crashed", "stopped"):  # the files as a crash leaves them: the WAL not checkpointed
        (tmp_path / name).mkdir()
        for suffix in ("", "-wal"):
            shutil.copyfile(f"{path}{suffix}", tmp_path / name / f"spool.sqlite{suffix}")
    spool.close()
    assert not Spool(path).unclean_stop

    assert Spool(tmp_path / "crashed" / "spool.sqlite").unclean_stop
    marker = tmp_path / "stopped" / "spool.sqlite.clean-stop"
    marker.touch()  # a clean stop whose checkpoint found no room
    reopened = Spool(tmp_path / "stopped" / "spool.sqlite")
    assert not reopened.unclean_stop and not marker.exists(), "taken away before the run writes"
    assert reopened.depth == 10
