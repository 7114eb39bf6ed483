"""The item commands through the real command line: import, export, stats, items, users."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from helpers import CFLUE_MULTI_RECORD, FIXTURES, decide_items, store_person, write_file

import db.importer
from db.engine import open_database
from db.formats import FORMATS
from db.visible_text import east_asian_cell_len
from reviewer.cli import cli, item_commands
from reviewer.cli.common import remember_filter_exams

HEADER = "Question,A,B,C,D,Answer\n"
ROWS = [
    'A port strike starts.,Strike,Delays,Shortages,Prices,"A, B, C, D"\n',
    'A harvest fails after drought.,Drought,Crop loss,Price rise,Imports,"A, B, C, D"\n',
    'A central bank raises rates.,Rates up,Loans dearer,Borrowing falls,Growth slows,"A, B, C, D"\n',
]
MCQ = [
    {
        "名称": "银行从业资格",
        "task": "判断题",
        "question": "通货膨胀会降低货币的购买力。",
        "choices": "{'A': '对', 'B': '错'}",
        "answer": "A",
        "analysis": None,
    },
    CFLUE_MULTI_RECORD,
]


def run(db_path: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db_path), *args], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def econ_csv(tmp_path: Path) -> Path:
    return write_file(tmp_path, "econ.csv", HEADER + "".join(ROWS))


@pytest.fixture
def mcq_json(tmp_path: Path) -> Path:
    return write_file(tmp_path, "exam.json", json.dumps(MCQ, ensure_ascii=False))


def test_format_choices_match_the_format_registry() -> None:
    assert ("auto", *FORMATS) == item_commands.IMPORT_FORMATS
    assert tuple(FORMATS) == item_commands.FILE_EXPORT_FORMATS


# --- import ------------------------------------------------------------------------------


def test_import_prints_a_summary_by_kind_and_a_second_run_adds_nothing(
    db_path: Path, econ_csv: Path, mcq_json: Path
) -> None:
    result = run(db_path, "import", str(econ_csv), str(mcq_json))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"{econ_csv} (econlogicqa, source econ): 3 records" in lines
    assert any(line.split() == ["ordering", "3", "0", "0", "0"] for line in lines)
    assert any(line.split() == ["truefalse", "1", "0", "0", "0"] for line in lines)
    assert any(line.split() == ["multi", "1", "0", "0", "0"] for line in lines)
    assert "2 of 2 files imported: 5 added, 0 updated, 0 unchanged, 0 invalid" in result.stdout

    again = run(db_path, "import", str(econ_csv))
    assert again.exit_code == 0
    assert "nothing new: all 3 valid records are unchanged" in again.stdout


def test_an_invalid_record_exits_1_naming_file_line_and_field(
    db_path: Path, tmp_path: Path
) -> None:
    bad = write_file(
        tmp_path, "bad.csv", HEADER + ROWS[0] + ROWS[1].replace('"A, B, C, D"', '"A, B"')
    )
    result = run(db_path, "import", str(bad))
    assert result.exit_code == 1
    assert f"error: {bad}: 1 invalid record; nothing imported from this file" in result.stderr
    assert f"{bad}: line 3: Answer: 'A, B': the order must place all 4 events" in result.stderr
    assert result.stdout == ""
    # The database file this import created would hold nothing: it is removed, and said so.
    assert not db_path.exists() and f"removed the database {db_path}" in result.stderr
    assert [p.name for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)] == []
    assert run(db_path, "init").exit_code == 0  # a database that existed is kept, even empty
    again = run(db_path, "import", str(bad))
    assert again.exit_code == 1 and "removed" not in again.stderr
    assert json.loads(run(db_path, "stats", "--json").stdout)["items"] == 0


def test_skip_invalid_imports_the_rest_and_exits_0(db_path: Path, tmp_path: Path) -> None:
    bad = write_file(tmp_path, "bad.csv", HEADER + ROWS[0] + "only,three,cells\n" + ROWS[2])
    result = run(db_path, "import", "--skip-invalid", str(bad))
    assert result.exit_code == 0, result.output
    assert f"{bad}: line 3: has 3 cells; the header has 6" in result.stderr
    assert "skipped 1 invalid record (listed above)" in result.stdout
    ids = [item["id"] for item in json.loads(run(db_path, "items", "--json").stdout)]
    assert ids == ["bad:1", "bad:3"]


def test_skip_invalid_with_no_valid_record_imports_nothing_and_exits_1(
    db_path: Path, tmp_path: Path
) -> None:
    """It said "nothing new: all 0 valid records are unchanged", exited 0 and kept the
    empty database it had created."""
    bad = write_file(tmp_path, "bad.csv", HEADER + "only,three,cells\n" + 'Drought.,a,b,c,d,"A"\n')
    good = write_file(tmp_path, "good.csv", HEADER + ROWS[0])
    result = run(db_path, "import", "--skip-invalid", str(bad))
    assert result.exit_code == 1, result.output
    assert f"{bad} (econlogicqa, source bad): 2 records\n  skipped 2 invalid records" in (
        result.stdout
    )
    assert "no valid record: nothing imported from this file" in result.stdout
    assert "all 0 valid records" not in result.stdout
    assert (
        f"{bad}: line 2: has 3 cells" in result.stderr and f"{bad}: line 3: Answer" in result.stderr
    )
    assert not db_path.exists() and f"removed the database {db_path}" in result.stderr
    both = run(db_path, "import", "--skip-invalid", str(bad), str(good))
    assert both.exit_code == 1 and "1 of 2 files imported: 1 added" in both.stdout
    assert f"{good} (econlogicqa, source good): 1 record\n" in both.stdout
    assert [item["id"] for item in json.loads(run(db_path, "items", "--json").stdout)] == ["good:1"]


# Each command whose --exam narrows items (options.exams), and what it says when a known
# exam leaves nothing.
EXAM_FILTERS = {
    "items": "no items match\n",
    "triage": "no suspicious items among kind truefalse; exam 基金从业资格; text “zzz”: "
    "no flags, no disagreeing models or annotators\n",
}


def test_the_table_names_every_command_with_an_exam_filter() -> None:
    def with_exam(group: click.Group) -> set[str]:
        return {
            name
            for name, command in group.commands.items()
            if any(getattr(p, "callback", None) is remember_filter_exams for p in command.params)
        } | {
            name
            for command in group.commands.values()
            if isinstance(command, click.Group)
            for name in with_exam(command)
        }

    assert with_exam(cli) == set(EXAM_FILTERS)


@pytest.mark.parametrize("command", sorted(EXAM_FILTERS))
def test_items_with_an_exam_no_item_has_lists_the_exams(db_path: Path, command: str) -> None:
    """`--exam 税务师` on data without that exam said only "no items match", as a typo or
    a partial name did: the refusal names the exams there are.  It then still exited 0
    and printed "no items match: …" (triage: "no suspicious items among exam 税务师"),
    where a misspelt --source is refused with exit 1: a script read the empty listing as
    "nothing there".  An unknown exam is now refused like an unknown source, in both
    commands: exit 1, one error line; a known exam that matches nothing still exits 0."""
    assert run(db_path, "import", str(FIXTURES / "cflue_mcq.json")).exit_code == 0
    result = run(db_path, command, "--exam", "税务师")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        "error: no item's exam (名称) is '税务师'; exams: "
        "CFA Level I, 会计从业资格, 保险从业资格, 初级会计职称, 基金从业资格, 期货从业资格, "
        "证券从业资格, 银行从业资格\n"
    )
    # A known exam that matches nothing else says only that.
    known = run(
        db_path, command, "--exam", "基金从业资格", "--kind", "truefalse", "--search", "zzz"
    )
    assert known.exit_code == 0 and known.stderr + known.stdout == EXAM_FILTERS[command]
    assert run(db_path, "items", "--exam", "基金从业资格").stdout


def test_an_exam_where_no_item_has_one_is_refused_saying_so(db_path: Path, econ_csv: Path) -> None:
    assert run(db_path, "import", str(econ_csv)).exit_code == 0
    result = run(db_path, "items", "--exam", "税务师")
    assert result.exit_code == 1
    assert result.stderr.endswith("; exams: none (no CFLUE item has 名称)\n")


def test_malformed_and_non_utf8_files_get_clear_errors(db_path: Path, tmp_path: Path) -> None:
    broken = write_file(tmp_path, "broken.json", '[{"task": "判断题",\n "question": "q",\n')
    latin1 = write_file(
        tmp_path,
        "latin1.csv",
        (HEADER + ROWS[0]).encode() + 'Caf\xe9,a,b,c,d,"A,B,C,D"\n'.encode("latin-1"),
    )
    result = run(db_path, "import", str(broken), str(latin1))
    assert result.exit_code == 1
    assert f"error: {broken}: line 3: malformed JSON" in result.stderr
    assert f"{latin1}: line 3: Question: is not valid UTF-8 text" in result.stderr
    assert "bytes that are not UTF-8 (first on line 3)" in result.stderr
    assert "0 of 2 files imported" in result.stdout


def test_a_file_that_does_not_exist_is_refused_by_the_command_line(
    db_path: Path, tmp_path: Path
) -> None:
    result = run(db_path, "import", str(tmp_path / "missing.csv"))
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_format_source_and_threshold_options(db_path: Path, tmp_path: Path) -> None:
    items = write_file(
        tmp_path, "items.txt", HEADER + "".join(ROWS) + ROWS[0].replace("starts", "begins")
    )
    auto = run(
        db_path, "import", str(items), "--source", "econ-2024", "--duplicate-threshold", "99"
    )
    assert auto.exit_code == 0, auto.output
    assert "(econlogicqa, source econ-2024)" in auto.stdout
    assert any(
        line.split() == ["ordering", "4", "0", "0", "0"] for line in auto.stdout.splitlines()
    )
    forced = run(db_path, "import", "--format", "cflue", str(items))
    assert forced.exit_code == 1 and "malformed JSON" in forced.stderr
    out_of_range = run(db_path, "import", str(items), "--duplicate-threshold", "120")
    assert out_of_range.exit_code == 2
    blank = run(db_path, "import", str(items), "--source", " ")
    assert blank.exit_code == 1 and "--source must not be empty" in blank.stderr
    long = run(db_path, "import", str(items), "--source", "s" * 300)  # refused by the importer
    assert long.exit_code == 1 and "--source: is 300 characters long (limit 255)" in long.stderr
    assert "Traceback" not in long.output + long.stderr


def test_the_real_cflue_file_through_the_command_line(db_path: Path, cflue_knowledge: Path) -> None:
    first = run(db_path, "import", str(cflue_knowledge))
    assert first.exit_code == 0, first.output
    lines = first.stdout.splitlines()
    for kind, added in (
        ("single", "2345"),
        ("multi", "1171"),
        ("truefalse", "348"),
        ("total", "3864"),
    ):
        assert any(line.split()[:2] == [kind, added] for line in lines), first.stdout
    second = run(db_path, "import", str(cflue_knowledge))
    assert "nothing new: all 3,864 valid records are unchanged" in second.stdout
    stats = json.loads(run(db_path, "stats", "--json").stdout)
    assert stats["items"] == 3864
    assert stats["by_kind"] == {"multi": 1171, "single": 2345, "truefalse": 348}


@pytest.mark.parametrize("name", ["econ_ordering.csv", "cflue_mcq.json"])
def test_fixtures_import_through_the_command_line(db_path: Path, name: str) -> None:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path} not written yet")
    result = run(db_path, "import", str(path))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


# --- export ------------------------------------------------------------------------------


def test_export_writes_each_format_and_refuses_what_it_cannot_hold(
    db_path: Path, tmp_path: Path, econ_csv: Path, mcq_json: Path
) -> None:
    run(db_path, "import", str(econ_csv), str(mcq_json))
    none_approved = run(db_path, "export", "--format", "jsonl", "--out", str(tmp_path / "x.jsonl"))
    assert none_approved.exit_code == 1
    assert "no items match status approved (try --status all)" in none_approved.stderr

    out = tmp_path / "out.csv"
    mixed = run(db_path, "export", "--format", "econlogicqa", "--out", str(out), "--status", "all")
    assert mixed.exit_code == 1 and "econlogicqa holds ordering items only" in mixed.stderr
    assert not out.exists()

    ordering = run(
        db_path, "export", "--format", "econlogicqa", "--out", str(out), "--status", "all",
        "--kind", "ordering",
    )  # fmt: skip
    assert ordering.exit_code == 0, ordering.output
    assert ordering.stdout.strip() == f"exported 3 items (3 ordering) to {out} as econlogicqa"
    assert out.read_text(encoding="utf-8") == "Question,A,B,C,D,Answer\n" + "".join(ROWS)

    exam = tmp_path / "exam.json"
    by_source = run(
        db_path, "export", "--format", "cflue", "--out", str(exam), "--status", "all",
        "--source", "exam",
    )  # fmt: skip
    assert by_source.exit_code == 0, by_source.output
    assert json.loads(exam.read_text(encoding="utf-8")) == MCQ

    one = run(
        db_path, "export", "--format", "cflue", "--out", str(tmp_path / "one.json"),
        "--status", "all", "--kind", "truefalse",
    )  # fmt: skip
    assert one.stdout.startswith("exported 1 item (1 truefalse) to "), one.output

    everything = tmp_path / "all.jsonl"
    two_sources = run(
        db_path, "export", "--format", "jsonl", "--out", str(everything), "--status", "all",
        "--source", "econ", "--source", "exam", "--kind", "ordering", "--kind", "multi",
    )  # fmt: skip
    assert two_sources.exit_code == 0, two_sources.output
    assert "exported 4 items (1 multi, 3 ordering)" in two_sources.stdout


def test_export_defaults_to_approved_items(db_path: Path, tmp_path: Path, econ_csv: Path) -> None:
    run(db_path, "import", str(econ_csv))
    database = open_database(db_path)
    decide_items(database, ["econ:2"])
    database.dispose()
    out = tmp_path / "approved.jsonl"
    result = run(db_path, "export", "--format", "jsonl", "--out", str(out))
    assert result.exit_code == 0
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["econ:2"]


@pytest.mark.parametrize(
    ("format_name", "expected_file"), [("hf", "README.md"), ("lm-eval", "_vetbench.yaml")]
)
def test_export_hands_folder_formats_to_the_evaluator_exporters(
    db_path: Path, tmp_path: Path, econ_csv: Path, format_name: str, expected_file: str
) -> None:
    run(db_path, "import", str(econ_csv))
    out = tmp_path / format_name
    result = run(db_path, "export", "--format", format_name, "--out", str(out), "--status", "all")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"exported 3 items (3 ordering) to {out} as {format_name}")
    assert (out / expected_file).is_file() and (out / "vetbench-export.json").is_file()


def test_shots_belong_to_lm_eval_only(db_path: Path, tmp_path: Path, econ_csv: Path) -> None:
    run(db_path, "import", str(econ_csv))
    args = ["export", "--out", str(tmp_path / "x"), "--status", "all", "--shots", "1"]
    refused = run(db_path, *args, "--format", "jsonl")
    assert refused.exit_code == 1 and "--shots applies to --format lm-eval only" in refused.stderr
    assert run(db_path, *args, "--format", "lm-eval").exit_code == 0


# --- stats, items, users -----------------------------------------------------------------


def test_stats_json_has_the_promised_figures(db_path: Path, econ_csv: Path) -> None:
    run(db_path, "import", str(econ_csv))
    run(db_path, "users", "add", "lee", "--role", "lead")
    stats = json.loads(run(db_path, "stats", "--json").stdout)
    for key in ("items", "by_kind", "by_status", "by_source", "judgments",
                "suspected_duplicates", "revisions", "decisions", "people"):  # fmt: skip
        assert key in stats
    assert stats["items"] == 3 and stats["by_kind"] == {"ordering": 3}
    assert stats["by_status"] == {"pending": 3} and stats["by_source"] == {"econ": 3}
    assert (stats["judgments"], stats["revisions"], stats["decisions"]) == (0, 3, 0)
    assert stats["people"] == 1 and stats["people_by_role"] == {"lead": 1}
    text = run(db_path, "stats").stdout
    assert "items: 3" in text and "by kind: ordering 3" in text


def test_items_lists_ids_kinds_statuses_and_previews(
    db_path: Path, econ_csv: Path, mcq_json: Path
) -> None:
    run(db_path, "import", str(econ_csv), str(mcq_json))
    lines = run(db_path, "items").stdout.splitlines()
    assert [line.split()[:3] for line in lines] == [
        ["econ:1", "ordering", "pending"],
        ["econ:2", "ordering", "pending"],
        ["econ:3", "ordering", "pending"],
        ["exam:1", "truefalse", "pending"],
        ["exam:2", "multi", "pending"],
    ]
    # econ:1's key A, B, C, D lists its events as given: its flag follows the preview
    assert lines[0].endswith("A port strike starts.  [order-leak]")
    listed = json.loads(run(db_path, "items", "--kind", "multi", "--json").stdout)
    assert listed == [
        {
            "id": "exam:2",
            "kind": "multi",
            "status": "pending",
            "source": "exam",
            "revision": 1,
            "suspected_duplicate_of": None,
            "preview": "我国金融市场体系包括（）。",
            "flags": [],
        }
    ]
    assert len(run(db_path, "items", "--limit", "2").stdout.splitlines()) == 2
    both = run(db_path, "items", "--kind", "multi", "--kind", "truefalse").stdout.splitlines()
    assert [line.split()[0] for line in both] == ["exam:1", "exam:2"]
    assert len(json.loads(run(db_path, "items", "--source", "econ", "--json").stdout)) == 3
    empty = run(db_path, "items", "--status", "approved")
    assert empty.exit_code == 0 and "no items match" in empty.stderr
    # `all`, as every command's --status takes it; several statuses, any of them
    every = run(db_path, "items", "--status", "all").stdout
    assert every == run(db_path, "items").stdout and len(every.splitlines()) == 5
    either = run(db_path, "items", "--status", "approved", "--status", "pending").stdout
    assert either == every


def test_item_previews_are_one_line_and_short(db_path: Path, tmp_path: Path) -> None:
    long_question = "Line one\nline two " + "word " * 40
    path = write_file(tmp_path, "long.csv", HEADER + f'"{long_question}",a,b,c,d,"A,B,C,D"\n')
    run(db_path, "import", str(path))
    [line] = run(db_path, "items").stdout.splitlines()
    assert "Line one line two word" in line and line.endswith("…  [order-leak]")


def test_users_add_list_and_change_role(db_path: Path) -> None:
    assert run(db_path, "users", "add", "ann").stdout.strip() == "added ann as annotator"
    assert run(db_path, "users", "add", "lee", "--role", "lead").exit_code == 0
    assert "already registered as annotator" in run(db_path, "users", "add", "ann").stdout
    changed = run(db_path, "users", "add", "ann", "--role", "lead", "--as", "lee")
    assert changed.stdout.strip() == "ann is now a lead (was annotator)"
    assert run(db_path, "users", "list").stdout.split() == ["ann", "lead", "lee", "lead"]
    people = json.loads(run(db_path, "users", "list", "--json").stdout)
    assert [(p["name"], p["role"]) for p in people] == [("ann", "lead"), ("lee", "lead")]
    assert run(db_path, "users", "add", "bob", "--role", "boss").exit_code == 2
    assert run(db_path, "users", "add", " ").exit_code == 1


def test_on_sqlite_only_a_lead_adds_a_lead_or_changes_a_role(db_path: Path) -> None:
    """SQLite has no logins: `users add` used to let anyone promote themselves or demote the
    only lead.  Once there is a lead, a lead's --as is needed; the last lead stays one."""
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0  # the first
    assert run(db_path, "users", "add", "ann").exit_code == 0  # a new annotator: anyone
    for attempt in (
        ("ann", "--role", "lead"),
        ("bo", "--role", "lead"),
        ("lena", "--role", "annotator"),
        ("ann", "--role", "lead", "--as", "ann"),
    ):
        refused = run(db_path, "users", "add", *attempt)
        assert refused.exit_code == 1 and "only a lead adds a lead" in refused.stderr, attempt
    typo = run(db_path, "users", "add", "ann", "--role", "lead", "--as", "lenna")
    assert typo.exit_code == 1 and "no person called 'lenna'" in typo.stderr
    alone = run(db_path, "users", "add", "lena", "--role", "annotator", "--as", "lena")
    assert alone.exit_code == 1 and "lena is the only lead" in alone.stderr
    assert run(db_path, "users", "list").stdout.split() == ["ann", "annotator", "lena", "lead"]
    # A Chinese name takes two terminal cells a character: the roles stay in one column.
    assert run(db_path, "users", "add", "王小明", "--as", "lena").exit_code == 0
    listed = run(db_path, "users", "list").stdout.splitlines()
    assert {east_asian_cell_len(line) - len(line.split()[-1]) for line in listed} == {8}, listed
    promoted = run(db_path, "users", "add", "ann", "--role", "lead", "--as", "lena")
    assert promoted.stdout.strip() == "ann is now a lead (was annotator)"
    demoted = run(db_path, "users", "add", "lena", "--role", "annotator", "--as", "ann")
    assert demoted.stdout.strip() == "lena is now an annotator (was lead)"
    set_roles = json.loads(run(db_path, "audit", "--json").stdout)
    assert [(e["person"], e["target"]) for e in set_roles if e["action"] == "set-role"] == [
        ("lena", "ann"),
        ("ann", "lena"),
    ]


def test_a_refused_name_creates_no_database(db_path: Path) -> None:
    refused = run(db_path, "users", "add", "a\tb", "--role", "lead")
    assert refused.exit_code == 1 and "printable text on one line" in refused.stderr
    assert not db_path.exists()


def test_an_import_keeps_a_database_it_created_that_another_writer_filled(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file an import created and stored nothing in is removed only when it holds no
    row: what another writer put there meanwhile is never lost."""
    real = db.importer.import_files

    def import_while_someone_registers(*args: object, **kwargs: object) -> object:
        report = real(*args, **kwargs)  # type: ignore[arg-type]
        meanwhile = open_database(db_path)
        store_person(meanwhile, "zoe")
        meanwhile.dispose()
        return report

    monkeypatch.setattr(db.importer, "import_files", import_while_someone_registers)
    bad = write_file(tmp_path, "bad.csv", "garbage\n")
    result = run(db_path, "import", str(bad))
    assert result.exit_code == 1 and "removed" not in result.stderr
    assert db_path.exists() and "zoe" in run(db_path, "users", "list").stdout


def test_users_add_registers_several_names_or_none(db_path: Path) -> None:
    added = run(db_path, "users", "add", "ann", "bo", "cy")
    assert added.stdout.splitlines() == [f"added {n} as annotator" for n in ("ann", "bo", "cy")]
    refused = run(db_path, "users", "add", "dee", " ", "eve")
    assert refused.exit_code == 1 and "eve" not in run(db_path, "users", "list").stdout
    assert "dee" not in run(db_path, "users", "list").stdout  # checked before anyone is added
    twice = run(db_path, "users", "add", "fay", "fay")
    assert twice.exit_code == 1 and "'fay' is named twice" in twice.output
    one_login = run(db_path, "users", "add", "gus", "hal", "--password-stdin")
    assert one_login.exit_code == 1 and "one login at a time" in one_login.output
    assert run(db_path, "users", "list").stdout.split() == [
        w for n in ("ann", "bo", "cy") for w in (n, "annotator")
    ]


def test_users_add_without_a_role_keeps_the_role_of_someone_registered(db_path: Path) -> None:
    """Onboarding annotators by name (`users add ann bo cy`) demoted bo, a lead among them:
    --role's default is for new people only."""
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    assert run(db_path, "users", "add", "bo", "--role", "lead", "--as", "lena").exit_code == 0
    added = run(db_path, "users", "add", "ann", "bo", "cy", "--as", "lena")
    assert added.stdout.splitlines() == [
        "added ann as annotator",
        "bo is already registered as lead",
        "added cy as annotator",
    ]
    people = json.loads(run(db_path, "users", "list", "--json").stdout)
    assert {p["name"]: p["role"] for p in people} == {
        "ann": "annotator",
        "bo": "lead",
        "cy": "annotator",
        "lena": "lead",
    }
    assert not [
        e for e in json.loads(run(db_path, "audit", "--json").stdout) if e["action"] == "set-role"
    ]


def test_import_as_someone_unregistered_is_refused_on_a_new_database_too(
    db_path: Path, tmp_path: Path
) -> None:
    """On a database with people `import --as zed` was refused; on a new one it imported
    and audited the import as zed, whom nothing had registered."""
    items = write_file(tmp_path, "o.csv", 'Question,A,B,Answer\nOrder.,x,y,"B, A"\n')
    refused = run(db_path, "import", str(items), "--as", "zed")
    assert refused.exit_code == 1 and "no person called 'zed'" in refused.stderr
    assert "vetbench users add zed" in refused.stderr and not db_path.exists()
    assert run(db_path, "users", "add", "zed").exit_code == 0
    assert run(db_path, "import", str(items), "--as", "zed").exit_code == 0
    [event] = [
        e for e in json.loads(run(db_path, "audit", "--json").stdout) if e["action"] == "import"
    ]
    assert event["person"] == "zed"


def test_users_list_on_an_empty_database_says_how_to_add_people(db_path: Path) -> None:
    assert run(db_path, "init").exit_code == 0
    assert "vetbench users add NAME" in run(db_path, "users", "list").stdout
