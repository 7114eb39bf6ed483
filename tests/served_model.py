"""A real OpenAI-compatible model server for tests and benches: ``transformers serve``.

:class:`ServedModel` starts ``transformers serve MODEL`` on 127.0.0.1 at a free port, in
its own process group, offline (``HF_HUB_OFFLINE=1``), waits until ``/health`` answers,
and stops the whole group when done.  It can also be killed as a crash would (SIGKILL)
and started again on the same port, and it counts the generation requests the server
logged, so a test can tell what was sent and what was not.

The scripted server (``fake_openai_server``) stays for what a real server will not do on
request: 429s, 500s, garbled bodies.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

HOST = "127.0.0.1"
START_TIMEOUT_S = 300.0  # loading even a tiny model takes long on a machine busy with others
# Uvicorn's access log: one line per answered request.
_GENERATION_LINE = re.compile(r'"POST /v1/(?:chat/)?completions HTTP/1\.1" (\d{3})')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


class ServedModel:
    """``transformers serve`` of one model directory (the model every request must name)."""

    def __init__(
        self,
        model_dir: Path | str,
        log_path: Path,
        *,
        device: str = "cpu",
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.model = str(model_dir)
        self.log_path = log_path
        self.device = device
        self.extra_args = extra_args
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._log_start = 0  # where this process's lines begin in the log

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def cli_options(self) -> tuple[str, ...]:
        """``vetbench eval`` options that evaluate the served model."""
        return ("--model", f"openai:{self.model}", "--base-url", self.base_url)

    def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Start the server (on the same port as before, after a kill) and wait for it."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        command = [
            sys.executable,
            "-c",
            "from transformers.cli.transformers import main; main()",
            "serve",
            self.model,
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--device",
            self.device,
            "--dtype",
            "float32",
            "--log-level",
            "info",  # the access log counts the requests
            *self.extra_args,
        ]
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.log_path.parent,
                start_new_session=True,  # its own process group, stopped as one
            )
        self._wait_until_healthy(timeout_s)

    def _wait_until_healthy(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        health = f"http://{HOST}:{self.port}/health"
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"transformers serve exited at start:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(health, timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"transformers serve not healthy in {timeout_s:g} s:\n{self.log_tail()}")

    def kill(self) -> None:
        """End the server at once, as a crash would (SIGKILL to its process group)."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        """Stop the server (SIGTERM to its group; SIGKILL if it lingers)."""
        self._signal(signal.SIGTERM)

    def _signal(self, number: signal.Signals) -> None:
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, number)
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        except ProcessLookupError:
            pass

    def log_text(self) -> str:
        """What the current (or last) server process logged."""
        if not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as log:
            log.seek(self._log_start)
            return log.read().decode("utf-8", "replace")

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def generation_requests(self) -> list[int]:
        """The HTTP status of every generation request (chat or completion) this server
        process answered, in order."""
        return [int(status) for status in _GENERATION_LINE.findall(self.log_text())]

    def __enter__(self) -> ServedModel:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
