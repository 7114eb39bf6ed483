#!/usr/bin/env bash
# The demo in one command: set everything up, build demo.db from fixtures/, evaluate the
# bundled demo model (SmolLM2-135M-Instruct) on its approved items with live accuracy,
# then open the review app. Extra arguments go to `vetbench eval` (e.g. --limit 10).
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export VETBENCH_DB=${VETBENCH_DB:-demo.db}

python scripts/make_demo_db.py "$VETBENCH_DB"
echo
echo "== Evaluating the demo model on the approved items (5 shots, greedy) =="
# The shots come from the fixtures' shot pools, one file per kind, never from the
# evaluated items: every kind gets its 5 shots (eval refuses a run that would get fewer).
vetbench eval --model demo --shots 5 \
  --shot-file fixtures/shots_ordering.jsonl --shot-file fixtures/shots_single.jsonl \
  --shot-file fixtures/shots_multi.jsonl --shot-file fixtures/shots_truefalse.jsonl "$@"
echo
vetbench runs
# What to type next in the caller's own shell, where neither .venv nor VETBENCH_DB is set.
cli=".venv/bin/vetbench --db $VETBENCH_DB"
[ "$caller" = "$PWD" ] || cli="cd $PWD && $cli"
echo
echo "The lead 'lena' sees the agreement (F2) and conflict (F3) screens:"
echo "  $cli review --as lena"
if [ -t 0 ] && [ -t 1 ]; then
  echo "Opening the review app as '${VETBENCH_USER:-$(id -un)}' (press ? for help, q to quit)."
  exec vetbench review --as "${VETBENCH_USER:-$(id -un)}" --new-user
fi
echo "The review app: $cli review --as ${VETBENCH_USER:-$(id -un)} --new-user"
