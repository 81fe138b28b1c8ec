"""Gateway conformance (gateway/contract/signing.md, "A counter belongs to a key"; process.md, `counters`): a
counter is bound to the key it was accepted under. Under an unchanged key `counters reset` is refused (and while
the gateway runs), so a replay stays refused; a changed key starts the node's counter afresh at the next start
(logged once), where the old key's frames are bad_mac whatever their counter; `counters reset` forgets the
counter of a re-keyed node at once. `counters list` shows each row's key state; the command's help and usage
errors. Every gateway under test side by side; Cassandra plays no part (the gateways point at a closed port:
accepted frames wait in the spool)."""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

from telemetry_conformance import Board, GatewayUnderTest, gateways_under_test, wait_for
from telemetry_conformance.scenario_fixtures import gateways  # noqa: F401 (fixture)
from test_signed_frames import rejects, signed_frame

EVERY_GATEWAY_INSIDE = True  # conftest: every gateway under test in each test, side by side
K1, K2, K3 = bytes(range(16)), bytes(range(1, 17)), bytes(range(2, 18))


def accepted(gateway) -> float:
    return gateway.metric("telemetry_gateway_frames_accepted_total", format="signed")


def test_a_counter_belongs_to_its_key(tmp_path, gateways):  # noqa: F811
    rigs = {}
    for i, (name, command) in enumerate(gateways_under_test().items()):
        folder = tmp_path / name
        folder.mkdir()
        board = Board(folder / "ttyUSB0")
        keys = folder / "keys"
        gateway = GatewayUnderTest.configure(folder, [board.link], "telemetry", "127.0.0.1",
                                             extra=f'\n[signing]\nkeys_file = "{keys}"\n')
        gateways.append(gateway)
        rigs[name] = (board, gateway, keys, command, 10 * i + 3)

    def write_keys(key: bytes) -> None:
        for _, _, keys, _, n in rigs.values():
            keys.write_text(f"node{n} {key.hex()}\n")
            os.chmod(keys, 0o600)

    def start_all() -> None:  # nothing listens on port 1: the frames wait in the spool
        each(lambda name, n: rigs[name][1].start(rigs[name][3], TELEMETRY_CASSANDRA_PORT="1"))

    def counters(name: str, *args: str) -> subprocess.CompletedProcess:
        _, gateway, _, command, _ = rigs[name]
        return subprocess.run([*command, "counters", *args, "--config", str(gateway.config_path)],
                              capture_output=True, text=True, timeout=30)

    def each(action) -> dict:
        """action(name, n) for every gateway at once (commands and stops take a second each on a busy machine)."""
        with ThreadPoolExecutor() as pool:
            futures = {name: pool.submit(action, name, rig[4]) for name, rig in rigs.items()}
            return {name: future.result() for name, future in futures.items()}

    def send(frames) -> None:  # frames(n): the bytes of node n
        for board, _, _, _, n in rigs.values():
            board.write(frames(n))

    def usage(name: str, n: int) -> None:  # process.md: --help exits 0, an unknown option 2 naming it
        command = rigs[name][3]
        helped = subprocess.run([*command, "counters", "reset", "--help"], capture_output=True, timeout=30)
        assert helped.returncode == 0, name
        done = subprocess.run([*command, "counters", "list", "--bogus"], capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and "--bogus" in done.stderr, (name, done.stderr)
    each(usage)

    write_keys(K1)
    start_all()
    send(lambda n: signed_frame(n, 1, 100, 0) + signed_frame(n, 2, 101, 1))
    for name, (_, gateway, _, _, n) in rigs.items():
        wait_for(lambda: accepted(gateway) == 2, 15, f"{name}: two frames under K1")
    for name, running in each(lambda name, n: counters(name, "reset", "--source", f"node{n}")).items():
        assert running.returncode == 1 and "in use" in running.stderr, (name, running)
    assert each(lambda name, n: rigs[name][1].stop()) == {name: 0 for name in rigs}

    def refused_then_listed(name: str, n: int) -> None:  # the key is unchanged: a reset would reopen replay
        refused = counters(name, "reset", "--source", f"node{n}")
        assert refused.returncode == 1 and "Re-key the node" in refused.stderr, (name, refused)
        assert K1.hex() not in refused.stderr + refused.stdout, name
        listed = counters(name, "list")  # the row as it was: a replay of counter 101 stays a replay
        assert (listed.returncode, listed.stdout) == (0, f"source=node{n} counter=101 key=current\n"), name
    each(refused_then_listed)

    write_keys(K2)  # the node was re-flashed and re-keyed: its counter restarts at 0
    for name, listed in each(lambda name, n: counters(name, "list")).items():
        assert listed.stdout == f"source=node{rigs[name][4]} counter=101 key=other\n", name
    start_all()
    send(lambda n: signed_frame(n, 4, 0, 0, key=K2) + signed_frame(n, 3, 102, 2)  # K1's next counter: bad_mac
         + signed_frame(n, 4, 0, 0, key=K2))  # K2's counter 0 again: a replay
    for name, (_, gateway, _, _, n) in rigs.items():
        wait_for(lambda: rejects(gateway) == {"bad_mac": 1, "replay": 1, "unsigned": 0}, 15, f"{name}: K2")
        assert accepted(gateway) == 1, name
        assert gateway.log().count(f"event=signing_counter_rekeyed source=node{n} counter=101 ") == 1, name
    assert each(lambda name, n: rigs[name][1].stop()) == {name: 0 for name in rigs}

    write_keys(K3)  # re-keyed again, and forgotten at once with the command

    def listed_then_reset(name: str, n: int) -> None:
        reset = counters(name, "reset", "--source", f"node{n}")
        assert reset.returncode == 0 and f"node{n}'s counter 0 (another key" in reset.stdout, (name, reset)
        assert counters(name, "list").stdout == "", name
    each(listed_then_reset)

