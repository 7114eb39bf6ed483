#!/usr/bin/env bash
# The test command: sets up .venv when needed, checks lint, formatting and types (ruff,
# mypy: a few seconds), starts a throwaway PostgreSQL server when Debian's postgresql
# binaries are installed (so the PostgreSQL tests run too), then runs the whole suite on
# VETBENCH_TEST_WORKERS pytest-xdist processes (default 3: on two cores many tests wait on
# files, sockets, subprocesses and the app's timers), handed tests in order as they free up
# (`--dist load`; tests/conftest.py puts the slow ones first). Extra arguments go to pytest
# (`-n 0`: one process).
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

echo "ruff check, ruff format --check, mypy" >&2
ruff check --quiet .
ruff format --check --quiet .
mypy --no-error-summary

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "${VETBENCH_TEST_PG_URL:-}" ] && [ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ]; then
  pg_dir=$(mktemp -d)
  chmod 755 "$pg_dir"
  run_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
  [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
  pg_port=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  run_pg "$pg_bin/initdb -D $pg_dir/data -U vetbench --auth=trust -E UTF8 >/dev/null"
  run_pg "$pg_bin/pg_ctl -D $pg_dir/data -o '-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200' -l $pg_dir/log -w start >/dev/null"
  trap 'run_pg "$pg_bin/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1 || true; rm -rf "$pg_dir"' EXIT
  export VETBENCH_TEST_PG_URL="postgresql+psycopg://vetbench@127.0.0.1:$pg_port/postgres"
  echo "PostgreSQL for tests on 127.0.0.1:$pg_port" >&2
fi

python -m pytest -n "${VETBENCH_TEST_WORKERS:-3}" --dist load "$@"
