"""The keys file (PROTOCOL.md section 8.5): `<source> <32 hex digits>` per line. Its errors name the line number,
never the line's text: a malformed line may hold a key."""

from __future__ import annotations

import os
import re
import stat

from .frame import is_source_name

_LINE = re.compile(r"[ \t]*(\S+)[ \t]+([0-9A-Fa-f]{32})[ \t]*")


class KeysFileError(ValueError):
    def __init__(self, text: str, rule: str = "syntax") -> None:
        super().__init__(text)
        self.rule = rule  # the config rule word (config.md, Errors): unreadable, syntax or distinct


def parse_keys(text: str) -> dict[str, bytes]:
    keys: dict[str, bytes] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip(" \t") or line.lstrip(" \t").startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None or not is_source_name(match[1]):
            raise KeysFileError(f"line {number}: not `<source> <32 hex digits>`")
        if match[1] in keys:
            raise KeysFileError(f"line {number}: source {match[1]} has a key on an earlier line", "distinct")
        keys[match[1]] = bytes.fromhex(match[2])
    return keys


def read_keys(path: str) -> dict[str, bytes]:
    """The keys of the file at path; KeysFileError when it cannot be read, is readable by group or others, or is
    malformed."""
    try:
        with open(path, "rb") as file:
            mode = os.fstat(file.fileno()).st_mode
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise KeysFileError(f"mode {stat.S_IMODE(mode):04o}: group or others may use it; chmod 600 it",
                                    "unreadable")
            data = file.read()
    except OSError as error:
        raise KeysFileError(error.strerror or str(error), "unreadable") from None
    try:
        return parse_keys(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise KeysFileError("not UTF-8 text") from None
