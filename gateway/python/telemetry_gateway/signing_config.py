"""[signing] of the config (gateway/contract/signing.md, "Keys"): its cross-key rules, and the shell that reads the
keys file or systemd credential into the verifier's policy. Errors are config errors (exit status 2); none quotes
a key or a keys file's line."""

from __future__ import annotations

import os
from typing import Any, Mapping

from .config_error import ConfigError, quote
from .frame import is_source_name
from .keys_file import KeysFileError, read_keys
from .signing import SigningPolicy

CREDENTIALS_DIRECTORY = "CREDENTIALS_DIRECTORY"


def check_signing(config: Any, origins: Mapping[str, str]) -> None:
    signing = config.signing
    if signing.keys_file and signing.keys_credential:
        raise ConfigError("signing.keys_credential", "conflict", "keys_file and keys_credential: at most one of them",
                          origins.get("signing.keys_credential", ""))
    for index, source in enumerate(signing.unsigned_allowed):
        if not is_source_name(source):
            raise ConfigError(f"signing.unsigned_allowed[{index}]", "syntax",
                              f"{quote(source)} is not a source name ([A-Za-z0-9_-]{{1,32}})",
                              origins.get("signing.unsigned_allowed", ""))


def signing_policy(config: Any, env: Mapping[str, str] = os.environ) -> SigningPolicy:
    """The keys (read now: at start only) and the settings of [signing]."""
    signing = config.signing
    key, path = "signing.keys_file", signing.keys_file
    if signing.keys_credential:
        key = "signing.keys_credential"
        folder = env.get(CREDENTIALS_DIRECTORY)
        if not folder:
            raise ConfigError(key, "unreadable", f"{CREDENTIALS_DIRECTORY} is not set: a unit's LoadCredential= "
                              "sets it")
        path = os.path.join(folder, signing.keys_credential)
    keys: dict[str, bytes] = {}
    if path:
        try:
            keys = read_keys(path)
        except KeysFileError as error:
            raise ConfigError(key, error.rule, f"keys file {path}: {error}") from None
    return SigningPolicy(keys, frozenset(signing.unsigned_allowed), signing.must_sign)
