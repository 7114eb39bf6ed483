"""Honest shots through the real CLI: a run that would get fewer shots than asked is
refused before anything is made (unless allowed), shots can be drawn from a named source
or status (never from the evaluated set), and every label (`runs`, `runs show`, `runs
table`) says the shots the prompts actually got: ``ordering 1-shot (2 asked)``.

The mixed set holds 8 approved items (2 of each kind) and 4 agreed ones (one of each
kind, source ``shots``): evaluating the approved items leaves exactly one shot per kind."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import Result
from eval_helpers import (
    MIXED_SET_ANSWERS,
    mixed_set,
    ok,
    ordering,
    refusal,
    single_zh,
    store,
    stored_runs,
)
from helpers import FIXTURES, ScreenHost, notices, run_cli, wait_until
from sqlmodel import select
from textual.widgets import Checkbox, DataTable, Static

from db.engine import Database
from db.models import AuditEvent, EvalRun
from db.validation import ItemDraft
from evaluator import shot_advice
from evaluator.backends.scripted import ScriptedBackend
from evaluator.run_params import RunParams
from reviewer.tui.screens.evaluation import EvaluationScreen

# Before this work `runs --json` listed these keys per run; they stay exactly these.
RUNS_JSON_KEYS = [
    "id",
    "model",
    "backend",
    "mode",
    "shots",
    "status",
    "stale",
    "done",
    "total",
    "infrastructure_failures",
    "correct",
    "accuracy",
    "accuracy_ci",
    "started_at",
    "finished_at",
    "release",
]


ORACLE = "scripted:oracle"  # right on every item: the answers are not the point here


@pytest.fixture
def url(database: Database, database_url: str) -> str:
    mixed_set(database)
    return database_url


def eval_cli(url: str, *args: str) -> Result:
    return run_cli(url, "eval", "--model", ORACLE, *args)


def audit_events(database: Database) -> int:
    with database.session() as session:
        return len(session.exec(select(AuditEvent)).all())


def test_a_run_with_fewer_shots_than_asked_is_refused_before_anything_is_made(
    url: str, database: Database
) -> None:
    before = audit_events(database)
    result = eval_cli(url, "--shots", "2")
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()  # one line
    assert line.startswith("error: too few shots: ordering would get 1 of 2 shots outside the ")
    assert "single would get 1 of 2" in line and "truefalse would get 1 of 2" in line
    for way in ("--shot-file", "--shots-for ordering=0", "--allow-fewer-shots"):
        assert way in line
    # Every stored item was looked at: one source or status of them cannot give more.
    assert "--shots-from" not in line
    assert stored_runs(url) == [] and audit_events(database) == before


def test_a_shortfall_of_one_order_size_names_it_and_suggests_only_what_was_not_tried(
    url: str, database: Database
) -> None:
    """A 5-event order needs 5-event shots: with three agreed 4-event orders and one
    5-event one to draw from, the 5-event orders fall short, not the kind, and
    `--shots-from agreed` is not suggested again."""
    five = ItemDraft(
        kind="ordering",
        prompt="A startup grows. Put the five events in logical order.",
        choices={label: f"Step {label} of the startup." for label in "ABCDE"},
        key="ABCDE",
    )
    store(database, [("econ5:1", five)])
    store(database, [("shots5:1", replace(five, prompt="A shop grows in five steps."))],
          status="agreed")  # fmt: skip
    for n in (21, 22):
        store(database, [(f"shots:{n}", ordering(n, "ABCD"))], status="agreed")
    result = eval_cli(url, "--kind", "ordering", "--shots", "2", "--shots-from", "agreed")
    assert refusal(result) == (
        "error: too few shots: ordering would get 1 of 2 shots for its 5-event orders among "
        "the agreed items outside the evaluated set: give shots with --shot-file FILE, one a "
        f"kind (e.g. --shot-file {FIXTURES / 'shots_ordering.jsonl'}) or --shots-from another "
        "source or status, ask for fewer (--shots 0, or --shots-for ordering=0), or run with "
        "fewer with --allow-fewer-shots"
    )
    assert stored_runs(url) == []


def test_the_shot_file_hint_works_outside_the_repository(
    url: str, database: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from a user's own folder, the hint names the example shot files by their real
    path (a relative fixtures/ is not there), and installed without them, none; it names
    --shots 0 and --allow-fewer-shots either way."""
    monkeypatch.chdir(tmp_path)
    said = eval_cli(url, "--kind", "ordering", "--shots", "2")
    assert said.exit_code == 1
    assert f"--shot-file {FIXTURES.resolve() / 'shots_ordering.jsonl'})" in said.stderr
    monkeypatch.setattr(shot_advice, "SHOT_EXAMPLES", tmp_path / "fixtures")  # a wheel install
    said = eval_cli(url, "--kind", "ordering", "--shots", "2")
    assert said.exit_code == 1 and "fixtures" not in said.stderr
    assert "give shots with --shot-file FILE (a JSONL item file: one item a line; repeatable)" in (
        said.stderr
    )
    assert "--shots 0" in said.stderr and "--allow-fewer-shots" in said.stderr


def test_the_advice_for_too_few_shots_works_when_followed_as_written(url: str) -> None:
    """Each way out the refusal names runs when typed as it says: the example files one
    `--shot-file` each (a `shots_*.jsonl` pattern expands to file names without the option),
    and `--shots-for` for every short kind (one of them left the others short)."""
    said = refusal(eval_cli(url, "--shots", "2"))
    for way in (r"\(e\.g\. ([^)]*)\)", r"\(--shots 0,(?: or)? ([^)]*)\)"):
        advice = re.search(way, said)
        assert advice is not None, said
        followed = eval_cli(url, "--shots", "2", *advice.group(1).split())
        assert followed.exit_code == 0, f"{advice.group(1)}: {followed.stderr}"
    assert len(stored_runs(url)) == 2


def test_a_long_list_of_unapproved_shots_is_named_in_part(url: str, database: Database) -> None:
    """Five not-yet-approved orders as shots: the note names three and counts the rest
    (the run's shots_used lists them all); in F4 the whole list covered the results."""
    for n in (31, 32, 33, 34):
        store(database, [(f"shots:{n}", ordering(n, "ABCD"))], status="agreed")
    ok(eval_cli(url, "--kind", "ordering", "--shots", "5"))
    [run] = stored_runs(url)
    [note] = [n for n in RunParams.from_json(run.params).shot_notes if "not-yet-approved" in n]
    assert re.fullmatch(
        r"ordering/en/4: too few approved items outside the evaluated set; using "
        r"not-yet-approved shots:\d+, shots:\d+, shots:\d+ and 2 more",
        note,
    ), note


def test_allow_fewer_shots_runs_and_every_label_says_the_shots_got(url: str) -> None:
    result = ok(eval_cli(url, "--shots", "2", "--allow-fewer-shots"))
    label = (
        "ordering 1-shot (2 asked), single 1-shot (2 asked), multi 1-shot (2 asked), "
        "truefalse 1-shot (2 asked)"
    )
    assert f"(scripted, generate, {label})  finished" in result.stdout
    assert "only 1 of 2 shots available outside the evaluated set" in result.stderr

    listing = ok(run_cli(url, "runs")).stdout.splitlines()
    assert "generate/1" in listing[1] and "generate/2" not in listing[1]
    assert " ".join(line.strip() for line in listing[2:]) == label  # wrapped at 80 columns
    assert all(len(line) <= 80 and line.startswith(" " * 6) for line in listing[2:])
    shown = ok(run_cli(url, "runs", "show", "1")).stdout
    assert f"(scripted, generate, {label})" in shown

    table = ok(run_cli(url, "runs", "table", "--json")).stdout
    (econ,) = [t for t in json.loads(table) if t["name"] == "econlogicqa"]
    titles = {column["key"]: column["title"] for column in econ["columns"]}
    assert titles["ordering/1-of-2-shot"] == "ordering 1-shot (2 asked)"
    assert "ordering 1-shot (2 asked)" in ok(run_cli(url, "runs", "table")).stdout

    (run,) = json.loads(ok(run_cli(url, "runs", "--json")).stdout)
    assert list(run) == RUNS_JSON_KEYS and run["shots"] == 2


def test_a_run_that_got_its_shots_keeps_its_plain_labels(url: str) -> None:
    ok(eval_cli(url, "--shots", "1"))
    listing = ok(run_cli(url, "runs")).stdout.splitlines()
    assert len(listing) == 2 and "generate/1" in listing[1]
    assert "(scripted, generate, 1-shot)" in ok(run_cli(url, "runs", "show", "1")).stdout
    (econ,) = [t for t in json.loads(ok(run_cli(url, "runs", "table", "--json")).stdout)]
    assert [column["title"] for column in econ["columns"]][0] == "ordering 1-shot"


@pytest.mark.parametrize("name", ["agreed", "shots"])
def test_shots_from_a_status_or_a_source(url: str, name: str) -> None:
    result = ok(eval_cli(url, "--shots", "1", "--shots-from", name))
    if name == "agreed":  # asked for: agreed shots need no note
        assert "note:" not in result.stderr
    else:  # a source's shots that are not approved yet are said
        assert "too few approved items of shots outside the evaluated set; using not-yet" in (
            result.stderr
        )
    (run,) = stored_runs(url)
    params = RunParams.from_json(run.params)
    assert params.shots_from == name
    used = [ref.id for refs in params.shots_used.values() for ref in refs]
    assert sorted(used) == ["shots:1", "shots:2", "shots:3", "shots:4"]
    assert params.shot_counts(1).plain


def test_shots_are_never_drawn_from_the_evaluated_set(url: str) -> None:
    """Every approved item is evaluated: none is left to serve as a shot."""
    result = eval_cli(url, "--shots", "1", "--shots-from", "approved")
    assert result.exit_code == 1
    assert "ordering would get 0 of 1 shot among the approved items outside the evaluated" in (
        result.stderr
    )
    assert stored_runs(url) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--shots-from", "nowhere"), "--shots-from nowhere: no items of that source"),
        # what it could have been
        (("--shots-from", "nowhere"), "; the sources: cflue, econ, shots\n"),
        (("--shots-from", "shots/ordering.jsonl"), "; shot files go to --shot-file\n"),
        (("--shots-from", "rejected"), "rejected items never serve as shots"),
        (
            ("--shots-from", "agreed", "--shot-file", str(FIXTURES / "shots_ordering.jsonl")),
            "give --shot-file or --shots-from, not both",
        ),
    ],
)
def test_a_bad_shot_source_is_refused(url: str, args: tuple[str, ...], message: str) -> None:
    result = eval_cli(url, "--shots", "1", *args)
    assert result.exit_code == 1 and message in result.stderr
    assert stored_runs(url) == []


def test_a_shot_file_without_a_kind_is_refused_for_that_kind(url: str) -> None:
    shots = str(FIXTURES / "shots_ordering.jsonl")
    refused = eval_cli(url, "--shots", "5", "--shot-file", shots)
    assert refused.exit_code == 1
    assert "single would get 0 of 5 shots in the shot file" in refused.stderr
    assert "ordering would get" not in refused.stderr  # the file has five orders
    ok(eval_cli(url, "--shots", "5", "--shot-file", shots, "--kind", "ordering"))


def test_one_shot_file_per_kind_gives_every_kind_its_shots(url: str) -> None:
    files = [str(path) for path in sorted(FIXTURES.glob("shots_*.jsonl"))]
    assert [Path(f).name for f in files] == [
        "shots_multi.jsonl",
        "shots_ordering.jsonl",
        "shots_single.jsonl",
        "shots_truefalse.jsonl",
    ]
    args = [arg for path in files for arg in ("--shot-file", path)]
    result = ok(eval_cli(url, "--shots", "5", *args))
    assert "note:" not in result.stderr
    (run,) = stored_runs(url)
    params = RunParams.from_json(run.params)
    assert params.shot_counts(5).plain and params.shot_notes == ()
    assert [ref.path for ref in params.more_shot_files] == files[1:]
    # the Chinese items get the Chinese shots of the pool first, the English ones English
    single = params.shots_used["single/zh"]
    assert all(ref.id.startswith("single-zh-") for ref in single)
    multi = params.shots_used["multi/en"]
    assert all(ref.id.startswith("multi-en-") for ref in multi)
    # a run resumes from the files as recorded
    ok(run_cli(url, "eval", "--resume", str(run.id)))


def test_articles_given_as_a_shot_file_are_said_to_be_articles(url: str) -> None:
    """Before: ten `choices` errors joined by ␊ on one line; `vetbench import` knew better."""
    result = eval_cli(url, "--shots", "1", "--shot-file", str(FIXTURES / "articles.jsonl"))
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {FIXTURES / 'articles.jsonl'}:1: these are articles (title, text), not items: "
        "`vetbench generate --kind ordering --articles FILE` (or --kind mcq) writes items from them"
    ]
    assert stored_runs(url) == []


def test_a_cflue_file_given_as_a_shot_file_is_said_to_be_a_json_array(url: str) -> None:
    """Before: 306 lines of "not valid JSON", one per line of the array."""
    path = FIXTURES / "cflue_mcq.json"
    result = eval_cli(url, "--shots", "1", "--shot-file", str(path))
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: a JSON array (a CFLUE file?), not JSONL: a shot file holds one solved "
        'item a line ({"kind", "prompt", "choices", "key", ...}); or import the file '
        f"(`vetbench import {path}`) and draw shots from it with --shots-from cflue_mcq"
    ]
    assert stored_runs(url) == []


def test_a_shot_files_problems_are_listed_one_a_line(url: str, tmp_path: Path) -> None:
    path = tmp_path / "shots.jsonl"
    path.write_text("[1]\n" + '{"kind": "single"}\n' * 12, encoding="utf-8")
    result = eval_cli(url, "--shots", "1", "--shot-file", str(path))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"error: {path}: 13 problems in the shot file:"
    assert lines[1] == f"  {path}:1: expected a JSON object, got list"
    assert lines[2:11] == [
        f"  {path}:{n}: choices: must be an object of label -> text" for n in range(2, 11)
    ]
    assert lines[11:] == ["  and 3 more"]
    assert "␊" not in result.stderr and stored_runs(url) == []


def _fixture_shot(file: str, line: int) -> ItemDraft:
    """Line ``line`` (1-based) of a fixture shot file as an item draft."""
    record = json.loads((FIXTURES / file).read_text(encoding="utf-8").splitlines()[line - 1])
    return ItemDraft(
        kind=record["kind"],
        prompt=record["prompt"],
        choices=record["choices"],
        key=record["key"],
        explanation=record.get("explanation"),
        language=record.get("language", "en"),
    )


def test_a_shot_file_shot_with_an_evaluated_items_id_is_left_out(
    database: Database, database_url: str
) -> None:
    """The pool imported as items too: its first line, approved, is evaluated; it is not
    its own shot (it was shot 1 of its own prompt, with its answer)."""
    store(database, [("multi-zh-1", _fixture_shot("shots_multi.jsonl", 1))])
    shots = str(FIXTURES / "shots_multi.jsonl")
    result = ok(eval_cli(database_url, "--shots", "4", "--shot-file", shots))
    assert "note: 1 shot in the shot file left out: it is an evaluated item (multi-zh-1)" in (
        result.stderr
    )
    (run,) = stored_runs(database_url)
    params = RunParams.from_json(run.params)
    assert [ref.id for ref in params.shots_used["multi/zh"]] == [
        "multi-zh-2",
        "multi-zh-3",
        "multi-zh-4",
        "multi-zh-5",
    ]
    assert params.shot_counts(4).plain
    prompt = ok(run_cli(database_url, "runs", "show", "1", "--item", "multi-zh-1", "--prompt"))
    assert prompt.stdout.count("下列属于货币市场工具的有") == 1  # the question, once


def test_a_shot_file_shot_with_an_evaluated_items_text_is_left_out_before_shots_are_counted(
    database: Database, database_url: str
) -> None:
    """Another id, the same question and events (in other punctuation and case): still the
    evaluated item.  Four of the file's five orders are left, and 5 asked is refused."""
    copy = _fixture_shot("shots_ordering.jsonl", 1)
    copy = replace(copy, prompt=copy.prompt.upper().replace(".", " !"))
    store(database, [("mine:1", copy)])
    shots = str(FIXTURES / "shots_ordering.jsonl")
    refused = eval_cli(database_url, "--shots", "5", "--shot-file", shots)
    assert refused.exit_code == 1
    assert "ordering would get 4 of 5 shots in the shot file (leaving out 1 evaluated item)" in (
        refused.stderr
    )
    assert stored_runs(database_url) == []

    result = ok(eval_cli(database_url, "--shots", "5", "--shot-file", shots, "--allow-fewer-shots"))
    assert "1 shot in the shot file left out: it is an evaluated item (shots_ordering.jsonl:1)" in (
        result.stderr
    )
    (run,) = stored_runs(database_url)
    used = [ref.id for refs in RunParams.from_json(run.params).shots_used.values() for ref in refs]
    assert used == [f"shots_ordering.jsonl:{n}" for n in (2, 3, 4, 5)]
    ok(eval_cli(database_url, "--shots", "4", "--shot-file", shots))  # 4 are there


def test_a_series_that_would_fall_short_makes_no_run_at_all(url: str) -> None:
    """EconLogicQA's protocol makes a 1-shot and a 5-shot run: the 5-shot one would get 1
    shot, so neither is made, not even the 1-shot run that would have its shot."""
    refused = eval_cli(url, "--protocol", "econlogicqa")
    assert refused.exit_code == 1 and "ordering would get 1 of 5 shots" in refused.stderr
    assert "--shots 0" not in refused.stderr  # the protocol fixes its shots
    assert stored_runs(url) == []
    ok(eval_cli(url, "--protocol", "econlogicqa", "--allow-fewer-shots"))
    assert [run.shots for run in stored_runs(url)] == [1, 5]
    # --shots picks one of the protocol's settings: the 5-shot run alone
    ok(eval_cli(url, "--protocol", "econlogicqa", "--shots", "5", "--allow-fewer-shots"))
    assert [run.shots for run in stored_runs(url)] == [1, 5, 5]


# --------------------------------------------------------------------- F4


async def test_f4_refuses_fewer_shots_unless_allowed_and_labels_the_shots_got(
    database: Database,
) -> None:
    mixed_set(database)
    backend = ScriptedBackend(MIXED_SET_ANSWERS, model="m")
    screen = EvaluationScreen(database, "ann", open_model=lambda _spec, _settings: backend)
    async with ScreenHost(screen).run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+s")  # the default: 5 shots, and one per kind exists
        said = screen.query_one("#start-message", Static)
        await wait_until(pilot, lambda: bool(said.display), "why no run started")
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "Start again")
        message = said.render().plain  # type: ignore[union-attr]
        assert message.startswith("No run started: too few shots: ordering would get 1 of 5")
        assert "tick 'Allow fewer shots'" in message
        assert "--allow-fewer-shots" not in message  # the form's words, not the CLI's
        # the example files by their real path, not a fixtures/ the user's folder lacks
        assert f"(such as {FIXTURES.resolve() / 'shots_*.jsonl'})" in message
        # refused before the model: it is not said to be loading
        messages = notices(pilot.app)
        assert not any(message.startswith("Loading") for message in messages), messages
        with database.session() as session:
            assert session.exec(select(EvalRun)).all() == []

        screen.query_one("#fewer-shots", Checkbox).value = True
        await pilot.press("ctrl+s")
        runs = screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: runs.row_count == 1, "the run on the leaderboard")
        assert "Loading demo ..." in notices(pilot.app)  # the form's model, opened by the test
        await wait_until(pilot, lambda: not screen.query_one("#start").disabled, "the run's end")
        await wait_until(
            pilot,
            lambda: "(5 asked)" in str(runs.get_row_at(0)[3]),
            "the leaderboard's shots",
        )
        assert str(runs.get_row_at(0)[3]).startswith("ordering 1-shot (5 asked), single 1-shot")
        title = screen.query_one("#run-title", Static).render()
        assert "ordering 1-shot (5 asked)" in getattr(title, "plain", str(title))


def single_en(n: int) -> ItemDraft:
    return replace(
        single_zh(n),
        prompt=f"Question {n}: which settlement cycle do China's A shares use?",
        explanation="A shares settle T+1.",
        language="en",
        meta={},
    )


def test_each_prompt_group_gets_shots_of_its_own_language_only(
    url: str, database: Database, tmp_path: Path
) -> None:
    """Before, a shot file of English single shots gave the Chinese questions those
    (``single/zh``: single-en-1…5, no note, "5-shot"), and a draw from the database filled
    a language's shortfall with the other language's items, without a word."""
    store(database, [("en:1", single_en(1))])
    english = [
        line
        for line in (FIXTURES / "shots_single.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("language", "en") == "en"
    ]
    shot_file = tmp_path / "en_single.jsonl"
    shot_file.write_text("\n".join(english) + "\n", encoding="utf-8")
    args = ("--kind", "single", "--shots", "5", "--shot-file", str(shot_file))
    assert refusal(eval_cli(url, *args)).startswith(
        "error: too few shots: single would get 0 of 5 shots for its zh items in the shot file: "
    )
    ok(eval_cli(url, *args, "--allow-fewer-shots"))
    (run,) = stored_runs(url)
    params = RunParams.from_json(run.params)
    assert params.shots_used["single/zh"] == ()
    assert [ref.id.split(":")[-1] for ref in params.shots_used["single/en"]] == [
        f"single-en-{n}" for n in range(1, 6)
    ]
    assert "single/zh: only 0 of 5 shots available in the shot file" in params.shot_notes

    # From the database: one pending Chinese single, two pending English ones.
    store(database, [("p:1", single_zh(21)), ("p:2", single_en(22)), ("p:3", single_en(23))],
          status="pending")  # fmt: skip
    args = ("--kind", "single", "--shots", "2", "--shots-from", "pending", "--allow-fewer-shots")
    ok(eval_cli(url, *args))
    params = RunParams.from_json(stored_runs(url)[-1].params)
    assert [ref.id for ref in params.shots_used["single/zh"]] == ["p:1"]
    assert sorted(ref.id for ref in params.shots_used["single/en"]) == ["p:2", "p:3"]
    assert (
        "single/zh: only 1 of 2 shots available among the pending items outside the evaluated set"
        in params.shot_notes
    )
