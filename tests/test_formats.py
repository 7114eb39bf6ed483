"""The file formats on their own: each reader's records and problems, each writer's output,
and format detection.  Database-level import rules are in ``test_import.py``."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from helpers import cflue_record, write_file

from db.formats import FormatError, cflue, detect_format, econlogicqa, jsonl, read_records
from db.formats.base import NativeItem, ParsedRecord, RevisionRecord, UnwritableItem
from db.formats.cflue import ChoicesError, format_choices, parse_choices
from db.formats.jsonl import FullItem
from db.items import ItemSnapshot
from db.validation import ItemDraft, validate_draft

HEADER = "Question,A,B,C,D,Answer,Explanation\n"
ROW = '"A firm grows.",Hire,Plan,Fund,Sell,"B, C, A, D",Plan first.\n'


def records(path: Path, format_name: str = "auto") -> list[ParsedRecord]:
    return list(read_records(path, format_name))


def draft_of(record: ParsedRecord) -> ItemDraft:
    assert record.draft is not None, record.problems
    return record.draft


def native_of(record: ParsedRecord) -> NativeItem:
    assert record.native is not None, record.problems
    return record.native


def problems_of(record: ParsedRecord) -> list[str]:
    found = [str(p) for p in record.problems]
    if record.draft is not None:
        found += [str(p) for p in validate_draft(draft_of(record))]
    return found


def snapshot_of(draft, item_id: str = "x:1") -> ItemSnapshot:  # type: ignore[no-untyped-def]
    return ItemSnapshot(
        id=item_id,
        kind=draft.kind,
        source="x",
        source_ref=draft.source_ref,
        language=draft.language,
        status="approved",
        revision=1,
        prompt=draft.prompt,
        choices=draft.choices,
        key=draft.key,
        explanation=draft.explanation,
        meta=draft.meta,
    )


# --- EconLogicQA CSV -------------------------------------------------------------------


def test_csv_row_becomes_an_ordering_draft_with_line_and_provenance(tmp_path: Path) -> None:
    path = write_file(tmp_path, "econ.csv", HEADER + ROW)
    [record] = records(path)
    assert record.place.line == 2 and record.ordinal == 1
    draft = record.draft
    assert draft is not None
    assert (draft.kind, draft.prompt, draft.key) == ("ordering", "A firm grows.", "B, C, A, D")
    assert draft.choices == {"A": "Hire", "B": "Plan", "C": "Fund", "D": "Sell"}
    assert draft.explanation == "Plan first."
    assert draft.source_ref == "line 2"
    assert draft.provenance == {"file": "econ.csv", "line": 2, "format": "econlogicqa"}
    assert validate_draft(draft) == [] and draft.key == "BCAD"


def test_csv_more_event_columns_and_fewer_events_per_row(tmp_path: Path) -> None:
    content = (
        "Question,A,B,C,D,E,F,Answer\n"
        'Six steps.,a,b,c,d,e,f,"F, E, D, C, B, A"\n'
        'Four steps.,a,b,c,d,,,"D, C, B, A"\n'
    )
    six, four = records(write_file(tmp_path, "wide.csv", content))
    assert list(draft_of(six).choices) == list("ABCDEF")
    assert list(draft_of(four).choices) == list("ABCD")
    assert four.place.line == 3 and four.ordinal == 2
    assert problems_of(six) == [] and problems_of(four) == []


def test_csv_keeps_text_exactly_and_unknown_columns_in_meta(tmp_path: Path) -> None:
    prompt = '  Spaces, "quotes",\r\nand a second line [b]not markup[/b]  '
    content = (
        "Question,A,B,Answer,Difficulty\n"
        + '"'
        + prompt.replace('"', '""')
        + '",first ,second,"B, A",hard\n'
    )
    [record] = records(write_file(tmp_path, "exact.csv", content))
    assert draft_of(record).prompt == prompt
    assert draft_of(record).choices == {"A": "first ", "B": "second"}
    assert draft_of(record).meta == {"extra_columns": {"Difficulty": "hard"}}
    assert draft_of(record).explanation is None


def test_csv_multiline_record_reports_the_line_it_starts_on(tmp_path: Path) -> None:
    content = HEADER + '"two\nlines",a,b,c,d,"A, B, C, D",x\n' + ROW
    first, second = records(write_file(tmp_path, "multi.csv", content))
    assert (first.place.line, second.place.line) == (2, 4)
    assert (first.ordinal, second.ordinal) == (1, 2)


def test_csv_blank_lines_are_skipped(tmp_path: Path) -> None:
    [record] = records(write_file(tmp_path, "blank.csv", HEADER + "\n" + ROW + "\n"))
    assert record.place.line == 3 and record.ordinal == 1


def test_csv_wrong_cell_count_is_a_record_problem(tmp_path: Path) -> None:
    bad, good = records(write_file(tmp_path, "cells.csv", HEADER + "Only,three,cells\n" + ROW))
    assert bad.draft is None and "has 3 cells; the header has 7" in problems_of(bad)[0]
    assert str(bad.place).endswith("cells.csv: line 2")
    assert good.draft is not None


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("", "empty"),
        ("   \n\n", "empty"),
        (HEADER, "no records"),
        ("Question,A,B,C,D\nq,a,b,c,d\n", "line 1: no Answer column. The header must be"),
        ("Question,A,B,C,D,Answer,A\n", "repeats A"),
        (HEADER + ROW + '"never closed,a,b,c,d,x,y\n', "malformed CSV"),
        ("Questión,A,B,C,D,Answer\n".encode("latin-1"), "line 1: the header is not UTF-8 text"),
    ],
)
def test_csv_file_level_errors_name_file_and_line(
    tmp_path: Path, content: str | bytes, words: str
) -> None:
    path = write_file(tmp_path, "bad.csv", content)
    with pytest.raises(FormatError) as raised:
        records(path, "econlogicqa")
    assert words in str(raised.value)
    assert str(path) in str(raised.value)


def test_a_header_of_thousands_of_columns_is_said_in_a_line_not_echoed_whole(
    tmp_path: Path,
) -> None:
    """A header the importer refuses is quoted cut, and its repeated names are a few and
    a count: a 20,000-column header was echoed whole (and checked in quadratic time)."""
    columns = [f"C{n}" for n in range(20_000)]
    path = write_file(tmp_path, "wide.csv", ",".join(["Question", *columns, "Answer"]) + "\n")
    with pytest.raises(FormatError) as raised:
        records(path, "econlogicqa")
    message = str(raised.value)
    assert "got Question,C0,C1," in message and message.endswith("…") and len(message) < 500
    repeated = write_file(tmp_path, "twice.csv", ",".join(["Question", *columns, *columns]))
    with pytest.raises(FormatError) as raised:
        records(repeated, "econlogicqa")
    assert str(raised.value).endswith("the header repeats C0, C1, C10, C100, C1000 and 19,995 more")


def test_csv_unclosed_quote_names_the_line_where_the_record_starts(tmp_path: Path) -> None:
    path = write_file(tmp_path, "bad.csv", HEADER + ROW + '"never closed,a,b,c,d,x,y\n' + ROW)
    with pytest.raises(FormatError) as raised:
        records(path)
    assert raised.value.line == 3


def test_csv_bom_and_crlf_are_read_as_plain_utf8(tmp_path: Path) -> None:
    content = (HEADER + ROW).replace("\n", "\r\n").encode("utf-8")
    [record] = records(write_file(tmp_path, "excel.csv", b"\xef\xbb\xbf" + content))
    assert draft_of(record).prompt == "A firm grows."
    assert draft_of(record).explanation == "Plan first."


def test_csv_bytes_that_are_not_utf8_are_a_problem_of_their_field_and_line(
    tmp_path: Path,
) -> None:
    content = (HEADER + ROW).encode() + 'Caf\xe9 prices,a,b,c,d,"A, B, C, D",x\n'.encode("latin-1")
    good, bad = records(write_file(tmp_path, "latin1.csv", content))
    assert problems_of(good) == []
    assert bad.place.line == 3
    assert problems_of(bad) == ["Question: is not valid UTF-8 text"]


def test_csv_writer_round_trips_through_the_reader(tmp_path: Path) -> None:
    content = (
        "Question,A,B,C,D,E,Answer,Explanation,Difficulty\n"
        '"Quote "" and, comma",a,b,c,d,e,"E, D, C, B, A",why,hard\n'
        'Four only,a,b,c,d,,"D, C, B, A",,easy\n'
    )
    original = records(write_file(tmp_path, "in.csv", content))
    for record in original:
        assert validate_draft(draft_of(record)) == []
    out = io.StringIO()
    assert econlogicqa.write([snapshot_of(r.draft) for r in original], out) == 2
    assert out.getvalue().splitlines()[0] == "Question,A,B,C,D,E,Answer,Explanation,Difficulty"
    again = records(write_file(tmp_path, "out.csv", out.getvalue()))
    for before, after in zip(original, again, strict=True):
        assert validate_draft(draft_of(after)) == []
        for name in ("prompt", "choices", "key", "explanation", "meta"):
            assert getattr(after.draft, name) == getattr(before.draft, name)


def test_csv_writer_spells_keys_the_econlogicqa_way() -> None:
    draft = draft_of(records_from_text('Question,A,B,Answer\nq,a,b,"B, A"\n')[0])
    validate_draft(draft)
    out = io.StringIO()
    econlogicqa.write([snapshot_of(draft)], out)
    assert out.getvalue() == 'Question,A,B,C,D,Answer\nq,a,b,,,"B, A"\n'


def records_from_text(content: str) -> list[ParsedRecord]:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return records(write_file(Path(scratch), "t.csv", content))


# --- CFLUE JSON --------------------------------------------------------------------------


def write_cflue(tmp_path: Path, *items: object, name: str = "exam.json") -> Path:
    return write_file(tmp_path, name, json.dumps(list(items), ensure_ascii=False))


def test_cflue_tasks_map_to_kinds_and_keep_the_exam_name(tmp_path: Path) -> None:
    path = write_cflue(
        tmp_path,
        cflue_record(),
        cflue_record(task="多项选择题", answer="AC", analysis="解析"),
        cflue_record(task="判断题", choices="{'A': '对', 'B': '错'}", answer="B"),
    )
    single, multi, truefalse = records(path)
    assert [draft_of(r).kind for r in (single, multi, truefalse)] == [
        "single",
        "multi",
        "truefalse",
    ]
    assert [r.place.record for r in (single, multi, truefalse)] == [1, 2, 3]
    assert draft_of(single).meta == {"名称": "银行从业资格"}
    assert draft_of(single).language == "zh"
    assert draft_of(single).explanation is None and draft_of(multi).explanation == "解析"
    assert draft_of(truefalse).choices == {"A": "对", "B": "错"}
    assert str(multi.place).endswith("exam.json: record 2")
    assert all(problems_of(r) == [] for r in (single, multi, truefalse))


def test_parse_choices_reads_a_dict_literal_of_strings() -> None:
    assert parse_choices("{'A': \"It's\", 'B': '两\\n行'}") == {"A": "It's", "B": "两\n行"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("['A', 'B']", "not a dict literal"),
        ("{'A': 'x', 'B': 'y'", "not a Python dict literal"),
        ("{'A': __import__('os').system('touch pwned')}", "not a quoted string"),
        ("{'A': (lambda: open('pwned', 'w'))()}", "not a quoted string"),
        ("{'A': 1, 'B': 'y'}", "not a quoted string"),
        ("{1: 'x'}", "label that is not a quoted string"),
        ("{'A': 'x', 'A': 'y'}", "twice"),
        ("{**{'A': 'x'}}", "label that is not a quoted string"),
        ("__import__('os').system('touch pwned')", "not a dict literal"),
        ("{'A': 'it''s', 'B': 'b'}", "choice A is 2 quoted strings side by side ('it' 's')"),
        ("{'A': 'a', 'B': 'y'\n 'z'}", "choice B is 2 quoted strings side by side"),
        ("{'A' 'B': 'x'}", "a label is 2 quoted strings side by side"),
        # after Chinese text, in brackets, after a trailing comma's line: still the right part
        ("{'A': '两行：是', 'B': ('y' 'z')}", "choice B is 2 quoted strings side by side"),
        ("{\n 'A': ('a'),\n 'B': 'b',\n 'C': 'c' 'd',\n}", "choice C is 2 quoted strings"),
    ],
)
def test_parse_choices_refuses_anything_but_string_constants(
    text: str, words: str, tmp_path: Path
) -> None:
    with pytest.raises(ChoicesError) as raised:
        parse_choices(text)
    assert words in str(raised.value)
    assert not (tmp_path / "pwned").exists()  # tests run in tmp_path: nothing ran


def test_format_choices_round_trips_awkward_text() -> None:
    choices = {"A": 'It\'s "quoted"', "B": "back\\slash\nnewline", "C": "中文"}
    assert parse_choices(format_choices(choices)) == choices
    one_string_each = "{'A': 'it\\'s', 'B': \"b's\", 'C': '''c'''}"
    assert parse_choices(one_string_each) == {"A": "it's", "B": "b's", "C": "c"}
    spread_out = "{\n  'A': ('a: 1, 2'),  # a comment\n  'B': \"{b}\",\n}"
    assert parse_choices(spread_out) == {"A": "a: 1, 2", "B": "{b}"}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (cflue_record(task="填空题"), "task: '填空题' is not one of"),
        (cflue_record(answer=None), "answer: is missing"),
        ({"task": "单项选择题", "question": "q", "choices": "{}"}, "answer: is missing"),
        (cflue_record(choices="[1, 2]"), "choices: is not a dict literal"),
        (cflue_record(choices=5), "choices: must be a string"),
        (cflue_record(question=3), "question: must be text"),
        (
            cflue_record(choices="{'A': 'it''s', 'B': 'y' 'z'}"),
            "choices: choice A is 2 quoted strings side by side",
        ),
        ("just a string", "must be a JSON object"),
    ],
)
def test_cflue_record_problems_name_the_field(
    tmp_path: Path, record: object, expected: str
) -> None:
    [parsed] = records(write_cflue(tmp_path, record))
    assert parsed.draft is None
    assert any(expected in p for p in problems_of(parsed)), problems_of(parsed)


@pytest.mark.parametrize(
    ("content", "words", "line"),
    [
        ('[{"task": "判断题",\n "question": "q"\n', "malformed JSON", 3),
        ('{"task": "判断题"}', "expected a JSON array", None),
        ("[]", "no records", None),
        ("", "empty", None),
    ],
)
def test_cflue_file_level_errors(
    tmp_path: Path, content: str, words: str, line: int | None
) -> None:
    with pytest.raises(FormatError) as raised:
        records(write_file(tmp_path, "bad.json", content), "cflue")
    assert words in str(raised.value)
    assert raised.value.line == line


def test_cflue_writer_round_trips_records_exactly(tmp_path: Path) -> None:
    originals = [
        cflue_record(analysis="因为……"),
        cflue_record(task="多项选择题", answer="ABD", **{"名称": "证券从业资格"}),
        cflue_record(task="判断题", choices="{'A': '对', 'B': '错'}", answer="A"),
        # fields CFLUE JSON does not know are kept in meta and written back, never dropped
        cflue_record(**{"year": 2020, "source_page": "p. 12", "tags": ["a", "b"]}),
    ]
    parsed = records(write_cflue(tmp_path, *originals))
    for record in parsed:
        assert validate_draft(draft_of(record)) == []
    assert draft_of(parsed[3]).meta == {
        "名称": originals[3]["名称"],
        "extra_fields": {"year": 2020, "source_page": "p. 12", "tags": ["a", "b"]},
    }
    out = io.StringIO()
    assert cflue.write([snapshot_of(r.draft) for r in parsed], out) == 4
    assert json.loads(out.getvalue()) == originals


# --- vetbench JSONL ------------------------------------------------------------------------


def full_item() -> FullItem:
    from datetime import UTC, datetime

    created = datetime(2026, 11, 29, 14, 0, tzinfo=UTC)
    revisions = [
        RevisionRecord(
            1,
            "Old\u2028text",
            {"A": "a", "B": "b"},
            "BA",
            None,
            "import",
            "import",
            {"file": "x.csv", "line": 2},
            created,
        ),
        RevisionRecord(
            2,
            "New text",
            {"A": "a", "B": "b"},
            "AB",
            "why",
            "ann",
            "edit: typo",
            {},
            created.replace(hour=15),
        ),
    ]
    return FullItem(
        id="econ:1", kind="ordering", source="econ", source_ref="line 2", language="en",
        status="approved", meta={"note": [1, 2]}, current_revision=2,
        suspected_duplicate_of="econ:0", duplicate_similarity=93.5, created_at=created,
        revisions=revisions,
    )  # fmt: skip


def test_jsonl_writer_and_reader_keep_every_field(tmp_path: Path) -> None:
    out = io.StringIO()
    assert jsonl.write([full_item()], out) == 1
    text = out.getvalue()
    [record] = records(write_file(tmp_path, "items.jsonl", text))
    assert record.problems == []
    draft, native = draft_of(record), native_of(record)
    assert (draft.item_id, draft.kind, draft.prompt, draft.key) == (
        "econ:1",
        "ordering",
        "New text",
        "AB",
    )
    assert draft.meta == {"note": [1, 2]} and draft.source_ref == "line 2"
    assert native.status == "approved" and native.current_revision == 2
    assert [r.prompt for r in native.revisions] == ["Old\u2028text", "New text"]
    assert native.revisions[1].author == "ann" and native.revisions[1].change_note == "edit: typo"
    assert native.suspected_duplicate_of == "econ:0" and native.states_duplicate
    again = io.StringIO()
    item = full_item()
    jsonl.write([item], again)
    assert again.getvalue() == text


def test_jsonl_hand_written_line_needs_only_kind_and_text(tmp_path: Path) -> None:
    line = {"kind": "truefalse", "prompt": "Is it?", "choices": {"A": "对", "B": "错"}, "key": "对"}
    [record] = records(write_file(tmp_path, "hand.jsonl", json.dumps(line, ensure_ascii=False)))
    assert draft_of(record).item_id is None and native_of(record).states_duplicate is False
    assert problems_of(record) == [] and draft_of(record).key == "A"
    assert native_of(record).status == "pending" and len(native_of(record).revisions) == 1


def test_jsonl_hand_written_empty_explanation_is_none_a_history_keeps_it(tmp_path: Path) -> None:
    text = {"prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB"}
    hand = {"kind": "ordering", **text, "explanation": ""}
    history = {"kind": "ordering", "revisions": [{**text, "number": 1, "explanation": ""}]}
    content = json.dumps(hand) + "\n" + json.dumps(history) + "\n"
    written, stored = records(write_file(tmp_path, "x.jsonl", content))
    assert draft_of(written).explanation is None
    assert native_of(written).revisions[0].explanation is None
    assert draft_of(stored).explanation == ""  # a history is kept exactly as stored


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # told at the end of its own line (before: "column 1", of the next one)
        (
            '{"kind": "ordering", "prompt": "p"',
            "malformed JSON: Expecting ',' delimiter (column 35)",
        ),
        ("[1, 2]", "must be a JSON object"),
        ('{"prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB"}', "kind: is missing"),
        (
            '{"kind": "ordering", "choices": {"A": "a", "B": "b"}, "key": "AB"}',
            "prompt: is missing",
        ),
        (
            '{"kind": "ordering", "status": "done", "prompt": "p", '
            '"choices": {"A": "a", "B": "b"}, "key": "AB"}',
            "status: 'done' is not one of",
        ),
        (
            '{"kind": "ordering", "current_revision": 3, "revisions": '
            '[{"number": 1, "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB"}]}',
            "current_revision: 3 is not one of the revisions",
        ),
        ('{"kind": "ordering", "revisions": []}', "revisions: must be a non-empty list"),
        (
            '{"kind": "ordering", "revisions": [{"number": 1, "prompt": "p", "key": "AB", '
            '"choices": ["a", "b"]}]}',
            "revisions[1].choices: must be an object",
        ),
        (
            '{"kind": "bogus", "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB"}',
            "kind: 'bogus' is not one of",
        ),
        (
            '{"kind": "ordering", "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB", '
            '"meta": {"extra_columns": "oops"}}',
            "meta.extra_columns: must be an object of column names and text, got str",
        ),
        (
            '{"kind": "ordering", "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB", '
            '"meta": {"extra_columns": {"Notes": 5}}}',
            "meta.extra_columns.Notes: must be text, got int",
        ),
        (
            '{"kind": "single", "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "A", '
            '"meta": {"名称": ["exam"]}}',
            "meta.名称: must be text, got list",
        ),
    ],
)
def test_jsonl_line_problems(tmp_path: Path, line: str, expected: str) -> None:
    good = '{"kind": "ordering", "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB"}'
    first, second = records(write_file(tmp_path, "x.jsonl", good + "\n\n" + line + "\n"))
    assert problems_of(first) == []
    assert second.place.line == 3 and second.ordinal == 2
    assert any(expected in p for p in problems_of(second)), problems_of(second)


def test_jsonl_a_line_written_with_other_formats_names_says_every_problem(tmp_path: Path) -> None:
    """CFLUE's question and answer, and a kind vetbench does not have: each is said once,
    the missing fields with the name this line used instead."""
    line = '{"kind": "sorting", "question": "Order.", "choices": {"A": "a"}, "answer": "A"}'
    (record,) = records(write_file(tmp_path, "x.jsonl", line + "\n"))
    assert problems_of(record) == [
        "kind: 'sorting' is not one of ordering, single, multi, truefalse",
        "prompt: is missing (this record has 'question': vetbench JSONL calls it prompt)",
        "key: is missing (this record has 'answer': vetbench JSONL calls it key)",
    ]


def test_jsonl_extra_columns_may_not_be_the_csv_s_own(tmp_path: Path) -> None:
    """They would write a header the CSV reader refuses (Answer twice) or reads otherwise
    (E as an event)."""
    extra = {"Answer": "zz", "E": "ee", "vetbench_release": "v9", "Notes": "kept"}
    line = {"kind": "ordering", "prompt": "p", "choices": {"A": "a", "B": "b"}, "key": "AB"}
    content = json.dumps({**line, "meta": {"extra_columns": extra}})
    [record] = records(write_file(tmp_path, "x.jsonl", content))
    assert problems_of(record) == [
        f"meta.extra_columns.{name}: {name} is a column of EconLogicQA CSV itself"
        for name in ("Answer", "E", "vetbench_release")
    ]


@pytest.mark.parametrize(
    ("format_name", "meta", "field"),
    [
        ("econlogicqa", {"extra_columns": "oops"}, "meta.extra_columns"),
        ("econlogicqa", {"extra_columns": {"Answer": "zz"}}, "meta.extra_columns.Answer"),
        ("cflue", {"名称": 3}, "meta.名称"),
    ],
)
def test_a_writer_refuses_meta_it_cannot_write_back_naming_item_and_field(
    format_name: str, meta: dict[str, object], field: str
) -> None:
    kind = "ordering" if format_name == "econlogicqa" else "single"
    draft = ItemDraft(kind, "p", {"A": "a", "B": "b"}, "A" if kind == "single" else "AB")
    draft.meta = meta
    writer = econlogicqa if format_name == "econlogicqa" else cflue
    with pytest.raises(UnwritableItem, match=f"item x:1: {re.escape(field)}: "):
        writer.write([snapshot_of(draft)], io.StringIO())


def test_jsonl_with_no_records_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="empty"):
        records(write_file(tmp_path, "none.jsonl", "\n \n"))


# --- detection ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.csv", HEADER + ROW, "econlogicqa"),
        ("a.txt", HEADER + ROW, "econlogicqa"),
        ("a.json", "[{}]", "cflue"),
        ("a.data", "\ufeff  [\n{}]", "cflue"),
        ("a.jsonl", '{"kind": "single"}\n', "jsonl"),
        ("a.json", '{"kind": "single"}\n{"kind": "multi"}\n', "jsonl"),
        ("a.csv", "id,text\n1,x\n", "econlogicqa"),
    ],
)
def test_detect_format_uses_content_then_extension(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    assert detect_format(write_file(tmp_path, name, content)) == expected


def test_a_tab_separated_econlogicqa_file_is_said_to_be_one(tmp_path: Path) -> None:
    # It was "cannot tell the file's format", and the separator said only with --format.
    tabs = write_file(tmp_path, "t.tsv", "Question\tA\tB\tAnswer\nOrder.\tx\ty\tA, B\n")
    assert detect_format(tabs) == "econlogicqa"
    said = "t.tsv: line 1: the columns are separated by tabs; save the file as comma-separated CSV"
    with pytest.raises(FormatError, match=re.escape(said)):
        records(tabs)


def test_detect_format_gives_up_clearly(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="--format"):
        detect_format(write_file(tmp_path, "notes.txt", "hello\n"))
    with pytest.raises(FormatError, match="cannot read"):
        detect_format(tmp_path / "missing.csv")


def test_language_follows_the_text_so_english_cflue_items_get_english_prompts() -> None:
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "cflue_mcq.json"
    records = [r for r in read_records(fixture, "cflue") if r.draft is not None]
    languages = {r.draft.language for r in records}
    assert languages == {"zh", "en"}
    english = [r.draft for r in records if r.draft.language == "en"]
    assert english and all(not any("\u4e00" <= ch <= "\u9fff" for ch in d.prompt) for d in english)
