"""What an import checks of an item's id, source, language and true/false choices, in
every format: ids and sources are printable text on one line without surrounding
whitespace (the rule of person names), a language is an open code held to the same rule,
and a true/false item's choices say A true and B false.  Each refusal names file, line
(or record) and field; what was valid before stays valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cflue_record, store_item, stored_judgments, write_file

from db.engine import Database
from db.import_report import FileReport
from db.importer import ImportOptionError, import_files
from db.items import iter_items
from reviewer.judging import submit_judgment

QUESTION = {"kind": "single", "prompt": "Which sets the policy rate?", "key": "A"}
CHOICES = {"A": "The central bank", "B": "The finance ministry"}


def jsonl(tmp_path: Path, *records: dict[str, Any], name: str = "items.jsonl") -> Path:
    lines = "".join(  # a hand-written line's choices; an exported one has them per revision
        json.dumps({**({} if "revisions" in r else {"choices": CHOICES}), **r}, ensure_ascii=False)
        + "\n"
        for r in records
    )
    return write_file(tmp_path, name, lines)


def imported(database: Database, path: Path, **options: Any) -> FileReport:
    [report] = import_files(database, [path], **options).files
    return report


def stored(database: Database) -> dict[str, tuple[str, str]]:
    """Every stored item's id -> (source, language)."""
    with database.session() as session:
        return {item.id: (item.source, item.language) for item in iter_items(session)}


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"id": " x1 "}, "id: ' x1 ' has whitespace around it"),
        ({"id": "x1\t"}, "id: must be printable text on one line; it holds U+0009"),
        ({"id": "a\nb"}, "id: must be printable text on one line; it holds U+000A"),
        ({"id": "x\x1b[31m"}, "id: must be printable text on one line; it holds U+001B"),
        ({"id": "\u202ex1"}, "id: must be printable text on one line; it holds U+202E"),
        (
            {"id": "x\u200b1"},
            "id: must be printable text on one line; it holds U+200B (ZERO WIDTH SPACE), "
            "which is invisible",
        ),
        (
            {"source": "econ\u200d"},
            "source: must not begin or end with U+200D (ZERO WIDTH JOINER), which is invisible "
            "there",
        ),
        ({"source": "econ "}, "source: 'econ ' has whitespace around it"),
        ({"source": "\u3000econ"}, "source: '\\u3000econ' has whitespace around it"),
        ({"source": "ec\x07on"}, "source: must be printable text on one line; it holds U+0007"),
        ({"source": "   "}, "source: is empty"),
        ({"language": " zh"}, "language: ' zh' has whitespace around it"),
        ({"language": "en\n"}, "language: must be printable text on one line; it holds U+000A"),
    ],
)
def test_ids_sources_and_languages_are_printable_on_one_line(
    database: Database, tmp_path: Path, record: dict[str, Any], problem: str
) -> None:
    path = jsonl(tmp_path, {**QUESTION, "id": "ok:1"}, {**QUESTION, "prompt": "Q2?", **record})
    report = imported(database, path)
    assert report.rejected
    assert report.problems == [f"{path}: line 2: {problem}"]
    assert stored(database) == {}


def test_an_id_with_spaces_is_not_a_second_item_that_looks_the_same(
    database: Database, tmp_path: Path
) -> None:
    path = jsonl(tmp_path, {**QUESTION, "id": " x1 "}, {**QUESTION, "id": "x1", "prompt": "Q2?"})
    report = imported(database, path, skip_invalid=True)
    assert report.problems == [f"{path}: line 1: id: ' x1 ' has whitespace around it"]
    assert list(stored(database)) == ["x1"]


def test_real_ids_sources_and_language_codes_stay_valid(database: Database, tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {**QUESTION, "id": "econ_ordering:3", "source": "econ_ordering"},
        {**QUESTION, "id": "knowledge:2670", "source": "银行 从业资格", "prompt": "Q2?"},
        {**QUESTION, "id": "题:1", "language": "zh-Hant", "prompt": "Q3?"},
        {**QUESTION, "language": "fr", "prompt": "Q4?"},
        {**QUESTION, "language": "EN", "prompt": "Q5?"},
    )
    report = imported(database, path)
    assert not report.rejected, report.problems
    # A language is an open code, stored as given: zh… items get the Chinese prompt
    # templates, every other the English ones (evaluator/prompts.py:template_language).
    assert stored(database) == {
        "econ_ordering:3": ("econ_ordering", "en"),
        "knowledge:2670": ("银行 从业资格", "en"),
        "题:1": ("items", "zh-Hant"),
        "items:4": ("items", "fr"),
        "items:5": ("items", "EN"),
    }


def test_a_source_named_with_control_characters_is_refused_in_csv(
    database: Database, tmp_path: Path
) -> None:
    path = write_file(tmp_path, "orders.csv", 'Question,A,B,Answer\n"Q",x,y,"B, A"\n')
    with pytest.raises(ImportOptionError) as refused:  # said of the option, before reading
        imported(database, path, source="my\x1b]0;title\x07source")
    assert str(refused.value) == "--source: must be printable text on one line; it holds U+001B"
    assert stored(database) == {}
    report = imported(database, write_file(tmp_path, "银行 考试.csv", path.read_text()))
    assert not report.rejected
    assert stored(database) == {"银行-考试:1": ("银行-考试", "en")}


@pytest.mark.parametrize(
    "choices",
    [
        {"A": "No", "B": "Yes"},
        {"A": "错", "B": "对"},
        {"A": "The central bank", "B": "The finance ministry"},
        {"A": "对", "B": "对"},
    ],
)
def test_a_true_false_item_says_true_then_false(
    database: Database, tmp_path: Path, choices: dict[str, str]
) -> None:
    record = {"kind": "truefalse", "prompt": "Prices rose.", "choices": choices, "key": "A"}
    path = jsonl(tmp_path, record)
    report = imported(database, path)
    assert report.problems == [
        f"{path}: line 1: choices: a truefalse item's choices are A true and B false "
        "(对/错, true/false, yes/no); these are not"
    ]


def test_a_true_false_revision_names_its_choices_field(database: Database, tmp_path: Path) -> None:
    revision = {"number": 1, "prompt": "Prices rose.", "choices": {"A": "B", "B": "A"}, "key": "A"}
    path = jsonl(tmp_path, {"id": "tf:1", "kind": "truefalse", "revisions": [revision]})
    assert [p.split(": ", 2)[2] for p in imported(database, path).problems] == [
        "revisions[1].choices: a truefalse item's choices are A true and B false "
        "(对/错, true/false, yes/no); these are not"
    ]


def test_a_cflue_true_false_question_with_its_words_swapped_is_refused(
    database: Database, tmp_path: Path
) -> None:
    good = cflue_record(task="判断题", choices="{'A': '对', 'B': '错'}", answer="B")
    swapped = cflue_record(task="判断题", choices="{'A': '错', 'B': '对'}", answer="A")
    path = write_file(tmp_path, "exam.json", json.dumps([good, swapped], ensure_ascii=False))
    report = imported(database, path)
    assert [p.split(": ", 1)[1] for p in report.problems] == [
        "record 2: choices: a truefalse item's choices are A true and B false "
        "(对/错, true/false, yes/no); these are not"
    ]


@pytest.mark.parametrize(
    "choices",
    [{"A": "对", "B": "错"}, {"A": "True", "B": "False"}, {"A": "正确", "B": "错误"}],
)
def test_true_false_words_in_either_language_are_taken(
    database: Database, tmp_path: Path, choices: dict[str, str]
) -> None:
    record = {"kind": "truefalse", "prompt": "Prices rose.", "choices": choices, "key": "错。"}
    report = imported(database, jsonl(tmp_path, record))
    assert not report.rejected, report.problems
    with database.session() as session:
        [item] = list(iter_items(session))
    assert item.key == "B"


def test_a_blind_true_false_answer_may_end_with_a_full_stop(database: Database) -> None:
    store_item(database, "tf:1", kind="truefalse", key="A")
    store_item(database, "tf:2", kind="truefalse", key="A")
    submit_judgment(
        database, "alice", "tf:1", revision_number=1, blind_answer="错。", verdict="keep"
    )
    submit_judgment(
        database, "alice", "tf:2", revision_number=1, blind_answer="false.", verdict="keep"
    )
    assert [j.blind_answer for j in stored_judgments(database)] == ["B", "B"]
