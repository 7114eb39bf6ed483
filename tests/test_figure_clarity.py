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


def test_the_terms_beside_accuracy_are_explained_where_they_are_printed(tmp_path: Path) -> None:
    """`chance`, `pairwise`, `set F1` and `extractor cflue read 19 of 19` were printed
    with no word of what they are: a legend under the figures says, once per command
    (three repeats print it once), for the terms shown; the deciding reader is marked."""
    url = mixed_set_url(tmp_path / "test.db")
    args = ["eval", "--model", "scripted:oracle", "--shots", "0", "--repeats", "3"]
    shown = ok(run_cli(url, *args, "--permute-options")).stdout
    lines = shown.splitlines()
    assert lines.count("what the terms mean:") == 1
    legend = " ".join(shown.split("what the terms mean:")[1].split())
    for said in (
        "pairwise: orders: the share of event pairs put in the key's relative order",
        "set F1: multi-answer: overlap of the chosen letters with the key's",
        "weighted F1: multiple choice:",
        "chance: the accuracy of answering at random on these items",
        "extractor: NAME read N of M: the answers that reader found",
    ):
        assert said in legend
    deciding = [line for line in lines if line.startswith("extractor") and "decides" in line]
    assert deciding and all(" lenient read " in line for line in deciding)  # the custom one's
    one_kind = ok(run_cli(url, "eval", "--model", "scripted:oracle", "--shots", "0",
                          "--kind", "single")).stdout  # fmt: skip
    legend = one_kind.split("what the terms mean:")[1]
    assert "pairwise:" not in legend and "set F1:" not in legend and "chance:" in legend
    as_json = ok(run_cli(url, "runs", "show", "1", "--json")).stdout
    assert "what the terms mean" not in as_json and "decides" not in as_json
