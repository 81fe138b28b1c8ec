"""The log rate limit of gateway/contract/logs.md, "Rate limiting", as a rule on events and time alone (vectors:
gateway/contract/vectors/log_rate_limit.jsonl). Pure: the caller gives the time, on a clock that never goes back.

Per event, each key remembers when its last line was written and how many were held back since. Keys are kept in
the order of their last line, so the oldest one is found without a scan of the table."""

from __future__ import annotations

from collections import OrderedDict


class RateLimit:
    """At most one line per (event, key) per interval; at most max_keys keys remembered per event, the others
    sharing the event's key `*`."""

    def __init__(self, interval: float, max_keys: int) -> None:
        self._interval = interval
        self._max_keys = max_keys
        self._keys: dict[str, OrderedDict[str, list]] = {}  # event → key → [last line's time, held since]
        self._shared: dict[str, list] = {}  # event → its `*` key's [last line's time, held since]

    def admit(self, now: float, event: str, key: str = "") -> int | None:
        """None: the line is held back (and counted). Else it is written, with suppressed=N when N > 0 (N returned:
        the lines of this event and key held back since its last line)."""
        keys = self._keys.setdefault(event, OrderedDict())
        slot = keys.get(key)
        if slot is None:
            if len(keys) >= self._max_keys and now - next(iter(keys.values()))[0] >= self._interval:
                keys.popitem(last=False)  # the oldest key's interval is over: forgotten, with its count
            if len(keys) >= self._max_keys:
                slot = self._shared.setdefault(event, [None, 0])
            else:
                slot = keys[key] = [None, 0]
        if slot[0] is not None and now - slot[0] < self._interval:
            slot[1] += 1
            return None
        held = slot[1]
        slot[0], slot[1] = now, 0
        if keys.get(key) is slot:
            keys.move_to_end(key)
        return held

    def remembered(self, event: str) -> int:
        """Keys of this event remembered (its `*` key not counted)."""
        return len(self._keys.get(event, ()))
