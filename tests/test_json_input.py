"""JSON a user gives vetbench is read strictly, by one decoder (`db/json_input.py`), in
every reader: item files (JSONL and CFLUE arrays), judging sheets, shot files and
scripted answers.  A key given twice, NaN and Infinity, a number too large for a float
and a whole number longer than Python converts are refused, each naming the file, the
line and what is wrong, with no traceback; nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from eval_helpers import stored_runs
from helpers import run_cli, run_process, store_item, store_person, stored_judgments, write_file

from db.engine import Database
from db.items import count_items
from db.json_input import JsonInputError, loads

LONG_NUMBER = "9" * 5000

# What a record carries beside its fields, and the reason given for it.
REFUSED = {
    "a-long-whole-number": (
        f'"x": {LONG_NUMBER}',
        "a whole number of 5,000 digits is longer than 4,300 digits",
    ),
    "a-repeated-key": ('"x": 1, "x": 2', 'key "x" is given twice in one object'),
    "nan": ('"x": NaN', "NaN is not a JSON number"),
    "infinity": ('"x": {"y": [Infinity]}', "Infinity is not a JSON number"),
    "minus-infinity": ('"x": -Infinity', "-Infinity is not a JSON number"),
    "a-number-too-large-for-a-float": ('"x": 1e999', "the number 1e999 is too large"),
}
CASES = pytest.mark.parametrize(("extra", "reason"), REFUSED.values(), ids=REFUSED.keys())


def with_extra(record: dict[str, object], extra: str) -> str:
    """``record`` as one JSON line, ``extra`` written inside it last."""
    return json.dumps(record, ensure_ascii=False)[:-1] + f", {extra}}}"


def item(prompt: str) -> dict[str, object]:
    return {"kind": "single", "prompt": prompt, "choices": {"A": "x", "B": "y"}, "key": "A"}


def cflue(question: str) -> dict[str, object]:
    return {
        "task": "单项选择题",
        "question": question,
        "choices": "{'A': 'x', 'B': 'y'}",
        "answer": "A",
    }


def refused(result: Result, *lines: str) -> str:
    assert result.exit_code == 1, result.output
    for line in lines:
        assert line in result.stderr, result.stderr
    return result.stderr


def piped(url: str, data: str, *args: str) -> tuple[int, str]:
    """``vetbench ARGS`` in a real process, ``data`` on its standard input (a pipe): its
    exit status and standard error."""
    done = run_process("--db", url, *args, stdin=data.encode(), timeout=120)
    return done.returncode, done.stderr.decode()


def stored_items(database: Database) -> int:
    with database.session() as session:
        return count_items(session)


def url_of(database: Database) -> str:
    return database.engine.url.render_as_string(hide_password=False)


def test_the_decoder_says_the_line_and_column_of_what_it_refuses() -> None:
    with pytest.raises(JsonInputError) as caught:
        loads('{"a": 1,\n "b": {"c": "x", "c": "y"}}')
    assert (caught.value.lineno, caught.value.colno) == (2, 7)
    assert caught.value.described == 'key "c" is given twice in one object (column 7)'
    with pytest.raises(JsonInputError) as caught:
        loads(f"[1,\n  {LONG_NUMBER}]")
    assert (caught.value.lineno, caught.value.colno) == (2, 3)
    assert loads('{"a": [1, 2.5, -3e10, "NaN"], "b": {"a": 1}}') == {
        "a": [1, 2.5, -3e10, "NaN"],
        "b": {"a": 1},
    }


def test_a_lone_surrogate_escape_is_said_as_such_not_as_bytes_to_re_save(
    database: Database, tmp_path: Path
) -> None:
    """``\\ud800`` alone is no character; a pair, or an escaped backslash before a u, is
    text.  A pure-ASCII file holding one is not told to be saved as UTF-8."""
    for text, column in (('"lone \\ud800 x"', 7), ('"low \\ude00"', 6), ('"hi \\ud83d\\n"', 5)):
        with pytest.raises(JsonInputError) as caught:
            loads(text)
        assert caught.value.colno == column and "half of a surrogate pair" in caught.value.msg
    assert loads('["\\ud83d\\ude00", "\\\\ud800", "\\u00e9"]') == ["\U0001f600", "\\ud800", "é"]
    line = json.dumps({**item("lone"), "prompt": "a \ud800 b"})  # json.dumps escapes it
    path = write_file(tmp_path, "lone.jsonl", line + "\n")
    said = refused(
        run_cli(database, "import", str(path)),
        f"{path}: line 1: malformed JSON: \\ud800 is half of a surrogate pair, not a character",
    )
    assert "UTF-8" not in said
    assert stored_items(database) == 0


# --- item files -----------------------------------------------------------------------------


@CASES
def test_an_item_file_line_is_refused_naming_file_line_and_reason(
    database: Database, tmp_path: Path, extra: str, reason: str
) -> None:
    lines = json.dumps(item("first")) + "\n" + with_extra(item("second"), extra) + "\n"
    path = write_file(tmp_path, "x.jsonl", lines)
    refused(run_cli(database, "import", str(path)), f"{path}: line 2: malformed JSON: {reason}")
    assert stored_items(database) == 0


@CASES
def test_a_cflue_record_is_refused_naming_file_line_and_reason(
    database: Database, tmp_path: Path, extra: str, reason: str
) -> None:
    text = f"[{json.dumps(cflue('一'))},\n {with_extra(cflue('二'), extra)}]"
    path = write_file(tmp_path, "x.json", text)
    result = run_cli(database, "import", str(path))
    refused(result, f"{path}: line 2: malformed JSON: {reason}")
    assert stored_items(database) == 0


def test_the_repeated_keys_of_the_probe_are_refused_not_resolved(
    database: Database, tmp_path: Path
) -> None:
    choices = (
        '{"kind":"single","id":"dk1","prompt":"dup key q",'
        '"choices":{"A":"x","B":"y","A":"z"},"key":"A"}'
    )
    key = (
        '{"kind":"single","id":"dk2","prompt":"q2","choices":{"A":"x","B":"y"},"key":"B","key":"A"}'
    )
    path = write_file(tmp_path, "dup.jsonl", f"{choices}\n{key}\n")
    refused(
        run_cli(database, "import", str(path)),
        f'{path}: line 1: malformed JSON: key "A" is given twice in one object (column 60)',
        f'{path}: line 2: malformed JSON: key "key" is given twice in one object (column 1)',
    )
    assert stored_items(database) == 0


def test_a_piped_cflue_array_names_the_record_with_a_repeated_key(database: Database) -> None:
    second = with_extra(cflue("二"), '"answer": "B"')
    text = f"[{json.dumps(cflue('一'))}, {second}]"
    status, said = piped(url_of(database), text, "import", "--format", "cflue", "-")
    assert status == 1 and "Traceback" not in said, said
    assert '<stdin>: malformed JSON in record 2: key "answer" is given twice' in said
    assert stored_items(database) == 0


# --- judging sheets -------------------------------------------------------------------------


@pytest.fixture
def team(database: Database) -> Database:
    store_item(database, "s:1", kind="single", key="A", choices={"A": "x", "B": "y"})
    store_person(database, "alice")
    return database


@CASES
def test_a_judging_line_is_refused_and_nothing_stored(
    team: Database, tmp_path: Path, extra: str, reason: str
) -> None:
    line = with_extra({"item_id": "s:1", "answer": "A", "verdict": "keep"}, extra)
    path = write_file(tmp_path, "sheet.jsonl", line + "\n")
    result = run_cli(team, "judge", "--from", str(path), "--as", "alice")
    refused(result, f"{path}: line 1: is not JSON: {reason}")
    assert stored_judgments(team) == []


def test_a_verdict_given_twice_is_refused_from_a_file_or_a_pipe(
    team: Database, tmp_path: Path
) -> None:
    line = '{"item_id": "s:1", "answer": "A", "verdict": "wrong-key", "verdict": "keep"}\n'
    path = write_file(tmp_path, "sheet.jsonl", line)
    said = 'line 1: is not JSON: key "verdict" is given twice in one object (column 1)'
    refused(run_cli(team, "judge", "--from", str(path), "--as", "alice"), f"{path}: {said}")
    status, stderr = piped(url_of(team), line, "judge", "--from", "-", "--as", "alice")
    assert status == 1 and f"<stdin>: {said}" in stderr, stderr
    assert stored_judgments(team) == []


# --- shot files and scripted answers -------------------------------------------------------


@pytest.fixture
def url(approved: list[str], database_url: str) -> str:
    return database_url


@CASES
def test_a_shot_file_line_is_refused_before_any_run(
    url: str, tmp_path: Path, extra: str, reason: str
) -> None:
    path = write_file(tmp_path, "x.jsonl", with_extra(item("a shot"), extra) + "\n")
    result = run_cli(
        url,
        "eval",
        "--model",
        "scripted:oracle",
        "--kind",
        "single",
        "--limit",
        "3",
        "--shots",
        "1",
        "--shot-file",
        str(path),
    )
    refused(result, f"{path}:1: not valid JSON ({reason})")
    assert stored_runs(url) == []


@CASES
def test_a_scripted_answers_line_is_refused_before_any_run(
    url: str, tmp_path: Path, extra: str, reason: str
) -> None:
    line = with_extra({"item_id": "cflue:1", "output": "B"}, extra)
    path = write_file(tmp_path, "answers.jsonl", line + "\n")
    result = run_cli(url, "eval", "--model", f"scripted:{path}", "--kind", "single", "--shots", "0")
    refused(result, f"{path}:1: not valid JSON ({reason})")
    assert stored_runs(url) == []


def test_a_scripted_answers_object_naming_an_item_twice_is_refused(
    url: str, tmp_path: Path
) -> None:
    path = write_file(tmp_path, "answers.json", '{"cflue:1": "B",\n "cflue:1": "C"}')
    result = run_cli(url, "eval", "--model", f"scripted:{path}", "--kind", "single", "--shots", "0")
    refused(result, f'{path}:1: not valid JSON (key "cflue:1" is given twice in one object)')
    assert stored_runs(url) == []


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"item_id": "cflue:1", "output": "B", "seconds": 1e308}'],
            ":1: seconds: must be a number of seconds, 0 or more and at most 86,400 (a day)",
        ),
        (
            ['{"item_id": "cflue:1", "output": "B"}', '{"item_id": "cflue:1", "output": "C"}'],
            ":2: item_id: cflue:1 is scripted on line 1 too; give each item one line",
        ),
    ],
    ids=["seconds-past-a-clock", "an-item-scripted-twice"],
)
def test_a_scripted_answers_file_is_checked_whole_before_any_run(
    url: str, tmp_path: Path, lines: list[str], message: str
) -> None:
    path = write_file(tmp_path, "answers.jsonl", "".join(line + "\n" for line in lines))
    result = run_cli(url, "eval", "--model", f"scripted:{path}", "--kind", "single", "--shots", "0")
    refused(result, f"{path}{message}")
    assert stored_runs(url) == []
