"""Ctrl-C during a `vetbench import` of several files: what was stored is said, not "Aborted!".

Each file commits on its own, so a Ctrl-C in the second file leaves the first one stored and
nothing of the second.  The second file is a named pipe the test holds open and writes
nothing to: the import waits there, after the first file's commit, until the test presses
Ctrl-C (SIGINT)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from helpers import FIXTURES, ctrl_c_in_commits, run_cli


def stored_sources(path: Path) -> dict[str, int]:
    """How many items each source has in the SQLite database at ``path``, read only (no
    database or no item table yet: {})."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
            rows = connection.execute("SELECT source, count(*) FROM item GROUP BY source")
            return dict(rows.fetchall())
    except sqlite3.OperationalError:  # not made yet, or its schema is being made
        return {}


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_ctrl_c_in_the_second_file_keeps_the_first_and_says_so(
    tmp_path: Path, as_json: bool
) -> None:
    first = tmp_path / "first.csv"
    shutil.copy(FIXTURES / "econ_ordering.csv", first)
    waiting = tmp_path / "waiting.csv"
    os.mkfifo(waiting)
    never = tmp_path / "never.csv"
    shutil.copy(FIXTURES / "econ_ordering.csv", never)
    path = tmp_path / "vetbench.db"
    process = subprocess.Popen(
        [sys.executable, "-m", "reviewer.cli", "--db", f"sqlite:///{path}", "import"]
        + [str(first), str(waiting), str(never)]
        + (["--json"] if as_json else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)},
    )
    writer = None
    try:
        deadline = time.monotonic() + 60
        # The pipe's writing end opens once the import opened it to read (ENXIO before):
        # then the first file is stored and done with, and the import waits on the pipe.
        while writer is None:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the import never reached the second file"
            try:
                writer = os.open(waiting, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as error:
                assert error.errno == errno.ENXIO, error
                time.sleep(0.1)
        assert "first" in stored_sources(path)
        process.send_signal(signal.SIGINT)
        out, err = (stream.decode() for stream in process.communicate(timeout=60))
    finally:
        if writer is not None:
            os.close(writer)
        if process.poll() is None:
            process.kill()
            process.wait()

    assert process.returncode == 130, (out, err)
    assert "Aborted!" not in err and "Traceback" not in err
    stored = stored_sources(path)
    assert set(stored) == {"first"} and stored["first"] > 0
    if as_json:
        files = json.loads(out)
        assert [(file["path"], file["stored"]) for file in files] == [
            (str(first), True),
            (str(waiting), False),
            (str(never), False),
        ]
        assert files[0]["added"] == stored["first"]
        assert files[1]["error"] == f"{waiting}: interrupted (Ctrl-C): nothing of it was stored"
        assert files[2]["error"] == f"{never}: not read (interrupted before it)"
        assert (
            err.strip() == f"error: interrupted while importing {waiting}: nothing of it was stored"
        )
    else:
        assert f"{first} (econlogicqa, source first)" in out
        assert f"1 of 3 files imported: {stored['first']} added" in out
        assert f"error: {waiting}: interrupted (Ctrl-C): nothing of it was stored" in err
        assert f"error: {never}: not read (interrupted before it)" in err
        assert "interrupted while importing" not in err  # said once, in the file's line


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_ctrl_c_while_a_file_commits_waits_for_the_commit_and_says_it_is_stored(
    tmp_path: Path, as_json: bool
) -> None:
    first, second, never = (tmp_path / f"{name}.csv" for name in ("first", "second", "never"))
    for path in (first, second, never):
        shutil.copy(FIXTURES / "econ_ordering.csv", path)
    db_path = tmp_path / "vetbench.db"
    with ctrl_c_in_commits(storing_source="second"):
        result = run_cli(
            db_path, "import", str(first), str(second), str(never), *(["--json"] * as_json)
        )

    assert result.exit_code == 130, result.output
    stored = stored_sources(db_path)
    assert set(stored) == {"first", "second"} and stored["second"] == stored["first"]
    if as_json:
        files = json.loads(result.stdout)
        assert [(file["path"], file["stored"]) for file in files] == [
            (str(first), True),
            (str(second), True),
            (str(never), False),
        ]
        assert files[1]["added"] == stored["second"] and files[1]["error"] is None
    else:
        assert f"{second} (econlogicqa, source second)" in result.stdout
        assert f"2 of 3 files imported: {stored['first'] * 2} added" in result.stdout
        assert "nothing of it was stored" not in result.stderr
        assert f"error: {never}: not read (interrupted before it)" in result.stderr
    assert f"error: interrupted (Ctrl-C) once {second} was stored" in result.stderr


def test_ctrl_c_twice_while_a_file_commits_says_it_may_be_stored(tmp_path: Path) -> None:
    first, second = (tmp_path / f"{name}.csv" for name in ("first", "second"))
    for path in (first, second):
        shutil.copy(FIXTURES / "econ_ordering.csv", path)
    db_path = tmp_path / "vetbench.db"
    with ctrl_c_in_commits(2, storing_source="second"):
        result = run_cli(db_path, "import", str(first), str(second))

    assert result.exit_code == 130, result.output
    assert set(stored_sources(db_path)) == {"first"}  # cut before SQLite committed, here
    assert (
        f"error: {second}: interrupted (Ctrl-C twice) while it was being stored: it may or "
        "may not be stored; import it again to be sure" in " ".join(result.stderr.split())
    )
    again = run_cli(db_path, "import", str(first), str(second))
    assert again.exit_code == 0, again.output
    assert set(stored_sources(db_path)) == {"first", "second"}
