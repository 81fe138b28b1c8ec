"""Entry-point wrapper: bad input and unreachable clusters end in one line and a non-zero exit, not a traceback."""

from __future__ import annotations

import sys
from typing import Callable

from .local_days import BadInput, NotFound
from .spark_session import ConnectionFailed


def run(job: str, main: Callable[[list[str]], int | None], argv: list[str]) -> None:
    try:
        code = main(argv) or 0
    except BadInput as error:
        print(f"{job}: error: {error}", file=sys.stderr)
        code = 2
    except NotFound as error:
        print(f"{job}: error: {error}", file=sys.stderr)
        code = 1
    except ConnectionFailed as error:
        print(f"{job}: failed: {error}", file=sys.stderr)
        code = 1
    except Exception as error:  # a Java exception from Spark or the connector: its first line says what failed
        if type(error).__name__ not in ("Py4JJavaError", "AnalysisException", "IllegalArgumentException"):
            raise
        text = str(error).strip()
        lines = [line for line in text.splitlines() if "Exception" in line] or text.splitlines() or [repr(error)]
        print(f"{job}: failed: {lines[0].strip()}", file=sys.stderr)
        code = 1
    sys.exit(code)
