"""The native reference: latte (Rust, single-row prepared inserts, 256 in flight), built with cargo once."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from telemetry_cassandra import settings_from_env

from bench_settings import ROOT, WORK

LATTE = ROOT / ".state" / "latte" / "bin" / "latte"
LATTE_VERSION = "0.29.0"
WORKLOAD = Path(__file__).with_name("latte_single_row_insert.rn")


def build_latte() -> bool:
    print(f"  building latte {LATTE_VERSION} (cargo, once; ~10 min on 2 cores) ...", flush=True)
    try:
        with open(WORK / "latte-build.log", "w") as log:
            subprocess.run(["cargo", "install", "--root", str(LATTE.parent.parent), "latte-cli", "--version",
                            LATTE_VERSION, "--locked"], check=True, stdout=subprocess.DEVNULL, stderr=log)
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        print(f"  latte could not be built ({error}); see {WORK}/latte-build.log")
        return False
    return True


def latte_reference(seconds: int) -> float | None:
    """latte's mean rows/s over `seconds`, into the hosts of TELEMETRY_CASSANDRA_HOSTS (no credentials: they
    would be on its command line); None when it cannot be built or run."""
    if not LATTE.exists() and not build_latte():
        return None
    hosts = settings_from_env(os.environ)["hosts"]
    result = subprocess.run([str(LATTE), "run", str(WORKLOAD), "-d", f"{seconds}s", "-p", "256", *hosts],
                            capture_output=True, text=True, cwd=WORK)
    (WORK / "latte.log").write_text(result.stdout + result.stderr)
    for line in result.stdout.splitlines():
        if line.strip().startswith("Throughput"):  # the summary's "Throughput [op/s] 44745 ± 16207"
            numbers = [float(x) for x in line.replace(",", "").split() if x.replace(".", "", 1).isdigit()]
            if numbers:
                return numbers[0]
    print(f"  latte gave no throughput line; see {WORK}/latte.log")
    return None
