#!/usr/bin/env bash
# The test command: sets up .venv when needed, checks lint, formatting and types (ruff,
# mypy), starts a throwaway PostgreSQL server when Debian's postgresql binaries are
# installed (so the PostgreSQL tests run too), then runs the whole suite on
# VETBENCH_TEST_WORKERS pytest-xdist processes (default 4: on two cores many tests wait
# on files, sockets, subprocesses and the app's timers; 3 left a fifth of the CPU idle in
# the last third of the run), handed tests in order as they free up (tests/conftest.py
# puts the slow ones first); `--dist loadgroup` keeps the tests of a module marked
# `xdist_group` in one process, which then starts its model server or loads its models
# once. Extra arguments go to pytest (`-n 0`: one process).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate

# Bytecode is cached for the test processes (each xdist worker and each `vetbench` child
# a test starts would otherwise compile vetbench and re-rewrite the tests again: a third
# of a worker's collection): PYTHONDONTWRITEBYTECODE, set on some machines, is lifted for
# this command. __pycache__ folders are ignored by git.
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 0 db reviewer evaluator tests bench >/dev/null
# One collection beside the linters (which use one core) writes the bytecode of what the
# tests import and pytest's rewritten test modules, which every worker would otherwise
# make for itself at the same moment.
python -m pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 &
collected=$!

# A throwaway server, started beside the linters too: nothing it holds outlives the run,
# so it neither syncs to disk nor vacuums behind the tests' backs.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
pg_started=
if [ -z "${VETBENCH_TEST_PG_URL:-}" ] && [ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ]; then
  pg_dir=$(mktemp -d)
  chmod 755 "$pg_dir"
  # as root, the server's commands run as postgres, from / (it may not enter this folder)
  run_pg() { if [ "$(id -u)" = 0 ]; then (cd / && su postgres -s /bin/sh -c "$*"); else sh -c "$*"; fi; }
  [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
  pg_port=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  trap 'run_pg "$pg_bin/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
  (
    run_pg "$pg_bin/initdb -D $pg_dir/data -U vetbench --auth=trust -E UTF8 >/dev/null"
    run_pg "$pg_bin/pg_ctl -D $pg_dir/data -o '-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c autovacuum=off -c max_connections=200' -l $pg_dir/log -w start >/dev/null"
  ) &
  pg_started=$!
  export VETBENCH_TEST_PG_URL="postgresql+psycopg://vetbench@127.0.0.1:$pg_port/postgres"
fi

echo "ruff check, ruff format --check, mypy" >&2
ruff check --quiet .
ruff format --check --quiet .
mypy --no-error-summary

if [ -n "$pg_started" ]; then
  if ! wait "$pg_started"; then
    echo "the test PostgreSQL server did not start; its log: $pg_dir/log" >&2
    cat "$pg_dir/log" >&2 || true
    exit 1
  fi
  echo "PostgreSQL for tests on 127.0.0.1:$pg_port" >&2
fi
wait "$collected" || true  # a collection error shows again, in full, below

python -m pytest -n "${VETBENCH_TEST_WORKERS:-4}" --dist loadgroup "$@"
