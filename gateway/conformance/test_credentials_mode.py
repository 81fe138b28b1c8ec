"""Gateway conformance (config.md, `cassandra.credentials_file`): a credentials file the group or others may read is
refused at start, as the keys file is: `run` and `check` exit 2 with a config error naming the file and never its
content, before anything opens. 0600 passes the check (the password is read at connect). Every gateway under
test side by side; no Cassandra, no port."""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

from telemetry_conformance import gateways_under_test

EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side
PASSWORD = "s3cret-never-shown"


def test_a_credentials_file_others_may_read_is_a_config_error(tmp_path):
    creds = tmp_path / "credentials.toml"
    creds.write_text(f'username = "telemetry_gateway"\npassword = "{PASSWORD}"\n')
    config = tmp_path / "gateway.toml"
    config.write_text(f'[spool]\npath = "{tmp_path / "spool.sqlite"}"\n[cassandra]\ncredentials_file = "{creds}"\n'
                      'port = 1\n')
    def refused(name: str, command: list[str]) -> None:
        for mode, args in ((0o640, ["run", "--port", str(tmp_path / "ttyUSB0")]), (0o604, ["check"])):
            creds = tmp_path / f"{name}-{mode:o}.toml"
            creds.write_text(f'username = "telemetry_gateway"\npassword = "{PASSWORD}"\n')
            creds.chmod(mode)
            done = subprocess.run([*command, *args, "--config", str(config)], capture_output=True, text=True,
                                  timeout=60, env={**os.environ, "TELEMETRY_CASSANDRA_CREDENTIALS_FILE": str(creds)})
            assert done.returncode == 2, (name, args, done.stderr)
            assert "config error at cassandra.credentials_file [unreadable]" in done.stderr, (name, done.stderr)
            assert str(creds) in done.stderr and f"{mode:04o}" in done.stderr, (name, done.stderr)
            assert PASSWORD not in done.stdout + done.stderr, name
        assert not (tmp_path / "spool.sqlite").exists(), name  # refused before anything opened
        # 0600 passes; check then fails only for the closed port: exit 1, no config error
        done = subprocess.run([*command, "check", "--config", str(config)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 1 and "config error" not in done.stderr, (name, done.stderr)
        assert PASSWORD not in done.stdout + done.stderr, name

    creds.chmod(0o600)
    with ThreadPoolExecutor() as pool:  # each command takes a second on a busy machine: the gateways at once
        for future in [pool.submit(refused, name, command) for name, command in gateways_under_test().items()]:
            future.result()
