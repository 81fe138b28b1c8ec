"""Which steps bring a spool file to this gateway's format (gateway/contract/spool.md, "Upgrading"; vectors:
gateway/contract/vectors/spool_upgrade.jsonl). Pure: it looks only at what the file says of itself, its
user_version and the columns of its tables. The steps run in this order, all in one transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

TABLES = ("frames", "receipt_stamps", "source_seqs", "source_counters")


def upgrade_steps(version: int, columns: Mapping[str, Sequence[str]], current: int) -> list[str] | None:
    """The steps for a file of this user_version whose tables have these columns (table → column names); [] when
    it is already in the current format (nothing is written), None for a newer format (refused)."""
    if version > current:
        return None
    frames, counters = columns.get("frames"), columns.get("source_counters")
    format1 = frames is not None and "metrics" not in frames  # values as JSON text
    steps = ["frames_format1_aside"] if format1 else []
    if counters is not None and "key_fingerprint" not in counters:  # format 4
        steps.append("add_key_fingerprint")
    if frames is not None and not format1 and "crc" not in frames:  # format 5 or older
        steps.append("add_crc")
    if steps or version < current or not all(table in columns for table in TABLES):
        steps.append("schema")  # spool.sql: the tables not there yet, and user_version, last but for the copy
    if format1:
        steps.append("format1_rows_copied")
    return steps
