"""Figures a reader can trust at a glance: `eval` and `runs` print rates in percent, as
the papers, `runs table` and the app (F4) do (their `--json` keeps fractions), and the
terms they print are explained where they are printed."""

from __future__ import annotations

import json
from pathlib import Path

from eval_helpers import mixed_set_url, ok
from helpers import run_cli


def test_eval_and_runs_print_percent_as_the_table_and_the_app_do(tmp_path: Path) -> None:
    """A reader saw `0.108` in `eval` and `10.8%` in F4 and `runs table` for one figure;
    every text output now says 10.8%-style, and the JSON keeps its fractions."""
    url = mixed_set_url(tmp_path / "test.db")
    shown = ok(run_cli(url, "eval", "--model", "scripted:oracle", "--shots", "0")).stdout
    assert "accuracy      100.0%  [67.6, 100.0]  (8 of 8)" in shown
    assert "unparsed      0.0%  (0)" in shown
    assert "right 8 (100.0%)" in shown  # the extractors' lines
    assert "acc 100.0% [" in shown  # the breakdowns
    listed = ok(run_cli(url, "runs")).stdout
    assert "100.0% [67.6, 100.0]" in listed
    assert "100.0%" in ok(run_cli(url, "runs", "show", "1")).stdout
    as_json = json.loads(ok(run_cli(url, "runs", "show", "1", "--json")).stdout)
    assert as_json["accuracy"] == 1.0
