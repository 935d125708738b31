"""The Go oracle: built once from this folder's Go module, then one long-lived process fed JSON Lines.

`build()` runs `go build` only when a Go source or go.mod/go.sum is newer than the binary. `Oracle`
keeps one process and sends it one case at a time: a case that takes longer than the timeout, or a
process that dies, raises `OracleError` with what the process wrote on stderr.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from conformance.cases import Case

MODULE = Path(__file__).resolve().parent
REPOSITORY = MODULE.parent
BINARY = REPOSITORY / "var" / "conformance" / "oracle"
BUILD_INPUTS = ("*.go", "go.mod", "go.sum")
# generous: a case takes milliseconds, but a loaded CI machine may stall the process for a while
DEFAULT_TIMEOUT = 60.0
# how much of the process's stderr an error message quotes
STDERR_TAIL = 2000


class OracleError(RuntimeError):
    """The oracle could not be built, gave no answer in time, or died."""


def needs_build(binary: Path = BINARY, module: Path = MODULE) -> bool:
    """True when the binary is missing or older than any Go source, go.mod or go.sum of the module."""
    if not binary.exists():
        return True
    built = binary.stat().st_mtime
    return any(path.stat().st_mtime > built for pattern in BUILD_INPUTS for path in module.rglob(pattern))


def build(binary: Path = BINARY, module: Path = MODULE) -> bool:
    """Build the oracle when `needs_build`; True when it was built. Go's own caches make a rebuild cheap."""
    if not needs_build(binary, module):
        return False
    binary.parent.mkdir(parents=True, exist_ok=True)
    command = ["go", "build", "-o", str(binary), "./cmd/oracle"]
    try:
        done = subprocess.run(command, cwd=module, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise OracleError("go is not installed: the oracle cannot be built") from exc
    if done.returncode != 0:
        raise OracleError(f"go build ./cmd/oracle failed (exit {done.returncode}):\n{done.stderr.strip()}")
    return True


class Oracle:
    """One oracle process; `run(case)` sends a case and returns the oracle's result for it.

    Use it as a context manager so the process is ended however the run ends.
    """

    def __init__(self, binary: Path = BINARY, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.binary = binary
        self.timeout = timeout
        # stderr goes to a file, not a pipe, so a chatty process can never block on a full pipe; the
        # file lives as long as the process and is closed in __exit__
        self._stderr: IO[str] = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115
        self._process = subprocess.Popen(
            [str(binary)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="oracle-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Move every stdout line to the queue; None marks the end of the stream (the process exited)."""
        stdout = self._process.stdout
        assert stdout is not None  # opened with stdout=PIPE
        for line in stdout:
            self._lines.put(line)
        self._lines.put(None)

    def run(self, case: Case) -> dict[str, Any]:
        """The oracle's result for `case`; raises `OracleError` on a timeout, a dead process or a mix-up."""
        stdin = self._process.stdin
        assert stdin is not None  # opened with stdin=PIPE
        try:
            stdin.write(json.dumps(case) + "\n")
            stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise self._died(case) from exc
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            # a process stuck on one case would not notice its stdin closing either
            self._process.kill()
            self.close()
            raise OracleError(
                f"the oracle gave no answer for case {case['id']} within {self.timeout:g} s{self._tail()}"
            ) from None
        if line is None:
            raise self._died(case)
        result: dict[str, Any] = json.loads(line)
        if result.get("id") != case["id"]:
            raise OracleError(f"the oracle answered case {result.get('id')!r} when asked {case['id']!r}")
        return result

    def _died(self, case: Case) -> OracleError:
        code = self._process.wait(timeout=self.timeout)
        return OracleError(f"the oracle exited with status {code} on case {case['id']}{self._tail()}")

    def _tail(self) -> str:
        self._stderr.seek(0)
        text = self._stderr.read()[-STDERR_TAIL:].strip()
        return f"; its stderr:\n{text}" if text else ""

    def close(self) -> None:
        """End the process: closing stdin lets it finish; it is killed if it does not exit promptly."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            # a process that already exited cannot take the close; wait() below collects it
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(timeout=5)

    def __enter__(self) -> Oracle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
        self._stderr.close()
