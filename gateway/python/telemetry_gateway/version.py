"""The gateway's version (the package metadata, pyproject.toml) and implementation name (process.md, --version)."""

from importlib.metadata import PackageNotFoundError, version

IMPLEMENTATION = "python"
try:
    VERSION = version("telemetry-gateway")
except PackageNotFoundError:  # run from a checkout that was never installed
    VERSION = "unknown"


def version_line() -> str:
    return f"telemetry-gateway {VERSION} ({IMPLEMENTATION})"
