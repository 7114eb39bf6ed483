"""Import, export and the command line never lose or silently change data (issue 16).

Each test reproduces one finding of the adversarial probe with real parts: real
files, pipes, FIFOs and symlinks, a real subprocess reading standard input, a real
second SQLite connection holding the write lock, a real socket that accepts and
never answers, and (as root) a real tiny tmpfs that fills up or is read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import decide_items, run_process
from sqlalchemy import text as sa_text
from sqlmodel import select

from db.audit import read_audit
from db.engine import Database, open_database
from db.faults import UnknownSchema
from db.importer import import_files
from db.models import Decision, Item, ItemRevision
from reviewer.adjudication import decide
from reviewer.cli import cli
from reviewer.judging import submit_judgment

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
ORDERING_CSV = FIXTURES / "econ_ordering.csv"
IS_ROOT = os.geteuid() == 0
ESC = "\x1b"
OSC52 = "\x1b]52;c;cHduZWQ=\x07"  # "write 'pwned' to the clipboard"


def run(db: Path | str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args], input=input)


def assert_one_line_error(result: Result | subprocess.CompletedProcess[bytes], *words: str) -> str:
    if isinstance(result, Result):
        code, err = result.exit_code, result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    else:
        code, err = result.returncode, result.stderr.decode()
    assert code == 1, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], err
    return lines[0]


def cflue_records(count: int) -> list[dict[str, object]]:
    return [
        {
            "名称": "银行从业资格",
            "task": "单项选择题",
            "question": f"第{n}题：下列哪一项属于货币政策工具{n}？",
            "choices": repr({"A": f"存款准备金率{n}", "B": f"财政补贴{n}", "C": f"关税{n}"}),
            "answer": "A",
            "analysis": "存款准备金率是货币政策工具。",
        }
        for n in range(1, count + 1)
    ]


def write_json(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def jsonl_lines(count: int, source: str = "aligned") -> str:
    lines = []
    for n in range(1, count + 1):
        record = {
            "id": f"{source}:{n}",
            "source": source,
            "kind": "ordering",
            "prompt": f"Record {n}: order the events of scenario number {n} in time.",
            "choices": {"A": f"first {n}", "B": f"second {n}", "C": f"third {n}"},
            "key": "ABC",
        }
        lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


@pytest.fixture
def mounted_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A real 1 MiB tmpfs (root only), to fill up or make read-only."""
    if not IS_ROOT:
        pytest.skip("needs root to mount a tmpfs")
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount_point)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def remount_read_only(mount_point: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)


# --- 1. re-import never changes reviewed items silently -----------------------------------


def approved_first_item(database: Database, tmp_path: Path) -> tuple[Path, list[dict[str, object]]]:
    records = cflue_records(6)
    path = write_json(tmp_path / "knowledge.json", records)
    assert import_files(database, [path]).ok
    with database.transaction() as session:
        from db.people import ensure_person
        from db.vocabulary import Role

        ensure_person(session, "lena", Role.LEAD)
    decide(database, "lena", "knowledge:5", "approved")
    return path, records


def approved_item_rewritten(database: Database, tmp_path: Path) -> Path:
    """The file of :func:`approved_first_item` with the approved record 5 given a new
    question and key."""
    path, records = approved_first_item(database, tmp_path)
    records[4] = {**records[4], "question": "改过的题目：下列哪一项是财政政策？", "answer": "B"}
    return write_json(path, records)


def test_a_changed_record_of_an_approved_item_is_refused_without_the_flag(
    database: Database, tmp_path: Path
) -> None:
    path = approved_item_rewritten(database, tmp_path)

    report = import_files(database, [path]).files[0]

    assert report.rejected and report.invalid == 1
    assert "record 5" in report.problems[0] and "--revise-reviewed" in report.problems[0]
    with database.session() as session:
        item = session.get(Item, "knowledge:5")
        assert item is not None and (item.status, item.current_revision) == ("approved", 1)


def test_revise_reviewed_makes_a_new_revision_that_goes_back_to_review(
    database: Database, tmp_path: Path
) -> None:
    path = approved_item_rewritten(database, tmp_path)

    report = import_files(database, [path], revise_reviewed=True).files[0]

    assert report.stored and report.revised == ["knowledge:5"]
    assert report.back_to_review == ["knowledge:5"]
    with database.session() as session:
        item = session.get(Item, "knowledge:5")
        assert item is not None and (item.status, item.current_revision) == ("pending", 2)
        [decision] = session.exec(select(Decision)).all()  # kept, about revision 1
        assert (decision.status, decision.revision_number) == ("approved", 1)
    # The export of the approved set no longer holds the unreviewed new text.
    out = tmp_path / "approved.jsonl"
    result = run(database.url_for_people, "export", "--format", "jsonl", "--out", str(out))
    assert "no items match" in result.stderr


def test_a_judged_item_is_protected_too_and_the_summary_names_revisions(
    tmp_path: Path, db_path: Path
) -> None:
    records = cflue_records(3)
    path = write_json(tmp_path / "exam.json", records)
    assert run(db_path, "import", str(path)).exit_code == 0
    database = open_database(db_path)
    submit_judgment(
        database, "ann", "exam:1", revision_number=None, blind_answer="A", verdict="keep"
    )
    database.dispose()
    records[0] = {**records[0], "question": "新的题目一？"}
    records[1] = {**records[1], "question": "新的题目二？"}
    write_json(path, records)

    refused = run(db_path, "import", str(path))
    assert refused.exit_code == 1
    assert "record 1: question: item exam:1 has been reviewed" in refused.stderr
    revised = run(db_path, "import", str(path), "--revise-reviewed", "--json")
    assert revised.exit_code == 0, revised.output
    [summary] = json.loads(revised.stdout)
    assert summary["revised"] == ["exam:1", "exam:2"]
    assert summary["back_to_review"] == ["exam:1"]
    text = run(db_path, "import", str(path))
    assert "nothing new" in text.stdout


def test_a_refused_change_of_a_reviewed_item_names_the_fields_it_changes(
    tmp_path: Path, db_path: Path
) -> None:
    """As every other problem does, and as the file names them: a CSV's columns."""
    path = tmp_path / "econ_ordering.csv"
    path.write_bytes(ORDERING_CSV.read_bytes())
    assert run(db_path, "import", str(path)).exit_code == 0
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    approve = ("--status", "approved", "--as", "lena")
    assert run(db_path, "decide", "econ_ordering:1", *approve).exit_code == 0
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[1] = lines[1].replace("Wholesale arabica prices jump", "Arabica prices jump")
    lines[1] = lines[1].replace('"B, A, D, C"', '"B, A, C, D"')
    path.write_text("".join(lines), encoding="utf-8")

    refused = run(db_path, "import", str(path), "--json")

    assert refused.exit_code == 1
    [report] = json.loads(refused.stdout)
    assert report["problems"] == [
        f"{path}: line 2: column B, Answer: item econ_ordering:1 has been reviewed and this "
        "record changes its text; --revise-reviewed makes it a new revision that goes back "
        "to review"
    ]


def test_a_re_import_that_undoes_a_leads_corrected_key_says_so_and_audits_the_key(
    tmp_path: Path, db_path: Path
) -> None:
    # The tester's probe: a typo fixed in another row, and the file's old key came back
    # as revision 3, refused as "changes its text" and audited with no key change.
    path = tmp_path / "econ_ordering.csv"
    path.write_bytes(ORDERING_CSV.read_bytes())
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    assert run(db_path, "import", str(path), "--as", "lena").exit_code == 0
    corrected = ("--status", "approved", "--key", "A,C,B,D", "--as", "lena")
    assert run(db_path, "decide", "econ_ordering:2", *corrected).exit_code == 0
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("a sharp rise", "a steep rise"), encoding="utf-8")

    refused = run(db_path, "import", str(path), "--as", "lena")
    assert refused.exit_code == 1
    assert (
        f"{path}: line 3: Answer: item econ_ordering:2 has been reviewed, and this record's key "
        "C, A, B, D undoes the key lena corrected it to in revision 2 (A, C, B, D): write that "
        "key in the file, or --revise-reviewed makes the file's key a new revision that goes "
        "back to review"
    ) in refused.stderr

    revised = run(db_path, "import", str(path), "--revise-reviewed", "--as", "lena")
    assert revised.exit_code == 0, revised.output
    assert (
        f"{path}: econ_ordering:2: the file's key C, A, B, D undoes the key lena corrected it "
        "to in revision 2 (A, C, B, D); it goes back to review with the file's key"
    ) in revised.stderr
    database = open_database(db_path)
    try:
        with database.session() as session:
            [event] = read_audit(session, target="econ_ordering:2", actions=["revise"])[-1:]
            [typo] = read_audit(session, target="econ_ordering:1", actions=["revise"])
    finally:
        database.dispose()
    assert event.changes["revision"] == 3 and event.changes["changed"] == ["key"]
    assert (event.changes["old_key"], event.changes["new_key"]) == ("ACBD", "CABD")
    assert typo.changes["changed"] == ["prompt"] and "old_key" not in typo.changes


def test_a_metadata_change_of_an_approved_item_is_applied_listed_and_audited(
    database: Database, tmp_path: Path
) -> None:
    """Metadata (the exam name in ``meta``) is not what the lead approved: the change is
    applied without a new revision and the item stays approved, but it is never silent."""
    path, records = approved_first_item(database, tmp_path)
    records[4] = {**records[4], "名称": "证券从业资格"}
    write_json(path, records)

    report = import_files(database, [path]).files[0]

    assert report.stored and report.invalid == 0
    assert report.metadata_updated == ["knowledge:5"]
    assert (report.revised, report.back_to_review) == ([], [])
    assert (report.tally.updated, report.tally.unchanged) == (1, 5)
    with database.session() as session:
        item = session.get(Item, "knowledge:5")
        assert item is not None
        assert (item.status, item.current_revision) == ("approved", 1)
        assert item.meta == {"名称": "证券从业资格"}
        [event] = read_audit(session, target="knowledge:5", actions=["metadata"])
        assert event.changes["meta"] == [{"名称": "银行从业资格"}, {"名称": "证券从业资格"}]
        [imported] = read_audit(session, target="knowledge.json", actions=["import"])[-1:]
        assert imported.changes["metadata_updated"] == ["knowledge:5"]
    again = import_files(database, [path]).files[0]
    assert (again.metadata_updated, again.tally.unchanged) == ([], 6)


def test_the_summary_and_json_list_metadata_changes_of_judged_items(
    tmp_path: Path, db_path: Path
) -> None:
    def line(source_ref: str, meta: dict[str, str]) -> str:
        record = {"id": "gen:1", "kind": "single", "prompt": "Which tool is monetary policy?",
                  "choices": {"A": "reserve ratio", "B": "tariffs"}, "key": "A",
                  "source_ref": source_ref, "meta": meta}  # fmt: skip
        return json.dumps(record) + "\n"

    path = tmp_path / "gen.jsonl"
    path.write_text(line("article a01", {"model": "m1"}), encoding="utf-8")
    assert run(db_path, "import", str(path)).exit_code == 0
    database = open_database(db_path)
    submit_judgment(
        database, "ann", "gen:1", revision_number=None, blind_answer="A", verdict="keep"
    )
    database.dispose()

    path.write_text(line("article a02", {"model": "m1"}), encoding="utf-8")
    summary = run(db_path, "import", str(path))
    assert summary.exit_code == 0, summary.output
    assert "metadata updated" in summary.stdout and "gen:1" in summary.stdout
    path.write_text(line("article a02", {"model": "m2"}), encoding="utf-8")
    listed = run(db_path, "import", str(path), "--json")
    assert listed.exit_code == 0, listed.output
    [file_summary] = json.loads(listed.stdout)
    assert file_summary["metadata_updated"] == ["gen:1"] and file_summary["revised"] == []
    database = open_database(db_path)
    with database.session() as session:
        item = session.get(Item, "gen:1")
        assert item is not None and (item.source_ref, item.meta) == ("article a02", {"model": "m2"})
        assert item.current_revision == 1 and item.status != "pending"
        changes = [e.changes for e in read_audit(session, target="gen:1", actions=["metadata"])]
    database.dispose()
    assert [sorted(set(c) - {"note"}) for c in changes] == [["source_ref"], ["meta"]]
    assert changes[0]["source_ref"] == ["article a01", "article a02"]


def test_a_jsonl_record_never_rewrites_another_sources_item(
    database: Database, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "knowledge.json", cflue_records(2))
    assert import_files(database, [path]).ok
    hostile = tmp_path / "other.jsonl"
    line = {
        "id": "knowledge:1",
        "source": "other",
        "kind": "single",
        "prompt": "被替换的题目？",
        "choices": {"A": "甲", "B": "乙"},
        "key": "A",
    }
    without_source = {key: value for key, value in line.items() if key != "source"}
    for record in (line, without_source):
        hostile.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
        report = import_files(database, [hostile], skip_invalid=True).files[0]
        assert report.invalid == 1 and "is an item of source knowledge" in report.problems[0]
    with database.session() as session:
        assert len(session.exec(select(ItemRevision)).all()) == 2


def test_another_file_under_the_same_source_revises_nothing_reviewed(
    database: Database, tmp_path: Path
) -> None:
    path, _ = approved_first_item(database, tmp_path)
    other = write_json(tmp_path / "OTHER.json", cflue_records(8)[::-1])
    report = import_files(database, [other], source="knowledge", skip_invalid=True).files[0]
    assert "knowledge:5" not in report.revised  # approved: refused, listed as a problem
    assert any("knowledge:5 has been reviewed" in problem for problem in report.problems)
    assert report.revised and all(item_id in report.revised for item_id in ("knowledge:1",))
    assert any("first imported from another file" in note for note in report.notes)
    with database.session() as session:
        item = session.get(Item, "knowledge:5")
        assert item is not None and (item.status, item.current_revision) == ("approved", 1)


# --- 2 and 4. input is read once, streamed, and only from files and pipes --------------------


def test_piped_standard_input_loses_no_record(tmp_path: Path) -> None:
    db = tmp_path / "piped.db"
    text = jsonl_lines(40).encode()
    for name in ("-", "/dev/stdin"):
        result = run_process("--db", str(db), "import", name, "--json", stdin=text)
        assert result.returncode == 0, result.stderr.decode()
        [summary] = json.loads(result.stdout)
        assert summary["records"] == 40
    database = open_database(db)
    with database.session() as session:
        item = session.get(Item, "aligned:11")
        assert item is not None
        revision = session.exec(
            select(ItemRevision).where(ItemRevision.item_id == "aligned:11")
        ).one()
    database.dispose()
    assert revision.prompt.startswith("Record 11:")


def test_a_fifo_is_read_once_with_auto_format(tmp_path: Path, db_path: Path) -> None:
    fifo = tmp_path / "items.fifo"
    os.mkfifo(fifo)
    content = ORDERING_CSV.read_bytes()

    def feed() -> None:
        with fifo.open("wb") as handle:
            handle.write(content)

    writer = threading.Thread(target=feed)
    writer.start()
    result = run_process("--db", str(db_path), "import", str(fifo), "--source", "econ", timeout=60)
    writer.join(timeout=10)
    assert result.returncode == 0, result.stderr.decode()
    rows = content.decode("utf-8-sig").count("\n") - 1
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("SELECT count(*) FROM item").fetchone()[0] == rows


def test_a_symlink_to_a_device_is_refused_at_once(tmp_path: Path, db_path: Path) -> None:
    link = tmp_path / "items.csv"
    link.symlink_to("/dev/zero")
    result = run_process("--db", str(db_path), "import", str(link), timeout=20)
    assert_one_line_error(result, "is a device")


def test_a_record_that_never_ends_stops_with_bounded_memory(tmp_path: Path, db_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    with huge.open("wb") as handle:  # 70 MB on one line, sparse on disk
        handle.write(b'{"kind": "ordering", "prompt": "')
        handle.truncate(70 * 1024 * 1024)
    result = run(db_path, "import", str(huge))
    assert_one_line_error(result, "line 1 is longer than 64 MB")


def test_utf16_is_named_without_echoing_nul_bytes(tmp_path: Path, db_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text(ORDERING_CSV.read_text(encoding="utf-8-sig"), encoding="utf-16")
    line = assert_one_line_error(run(db_path, "import", str(path)), "UTF-16")
    assert "\x00" not in line and "␀" not in line


def test_a_jsonl_item_cannot_be_its_own_duplicate(tmp_path: Path, db_path: Path) -> None:
    record = json.loads(jsonl_lines(1).splitlines()[0])
    record["suspected_duplicate_of"] = record["id"]
    path = tmp_path / "self.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = run(db_path, "import", str(path))
    assert result.exit_code == 1 and "names the item itself" in result.stderr


# --- 3. export writes through links and special files, atomically otherwise ----------------


@pytest.fixture
def approved_db(db_path: Path) -> Path:
    assert run(db_path, "import", str(ORDERING_CSV), "--source", "econ").exit_code == 0
    database = open_database(db_path)
    with database.session() as session:
        ids = list(session.exec(select(Item.id)).all())
    decide_items(database, ids)
    database.dispose()
    return db_path


def export(db: Path, out: Path | str) -> Result:
    return run(db, "export", "--format", "econlogicqa", "--out", str(out))


def test_export_keeps_a_symlink_and_the_files_mode(approved_db: Path, tmp_path: Path) -> None:
    target = tmp_path / "real.csv"
    target.write_text("old\n")
    target.chmod(0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert export(approved_db, link).exit_code == 0
    assert link.is_symlink() and target.read_text().startswith("Question,")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_export_writes_a_fifo_directly(approved_db: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = export(approved_db, fifo)
    reader.join(timeout=20)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert received and received[0].startswith(b"Question,")


@pytest.mark.skipif(not IS_ROOT, reason="making a device node needs root")
def test_export_never_replaces_a_device_node(approved_db: Path, tmp_path: Path) -> None:
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # the same device as /dev/full
    result = export(approved_db, full)
    assert_one_line_error(result, "No space left")
    assert stat.S_ISCHR(full.lstat().st_mode)


def test_export_to_standard_output(approved_db: Path) -> None:
    result = export(approved_db, "-")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Question,") and "exported" in result.stderr
    folder = run(approved_db, "export", "--format", "hf", "--out", "-")
    assert_one_line_error(folder, "standard output")


def fill_up(mount_point: Path) -> None:
    """Fill the file system at ``mount_point`` with the file ``filler``."""
    descriptor = os.open(mount_point / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(descriptor, b"x" * 4096):
            pass
    except OSError:
        pass  # the disk is full
    finally:
        os.close(descriptor)


def test_a_full_disk_keeps_the_old_report(approved_db: Path, mounted_tmpfs: Path) -> None:
    report = mounted_tmpfs / "report.md"
    report.write_text("the old report\n")
    fill_up(mounted_tmpfs)
    result = run(approved_db, "report", "--out", str(report), "--bootstrap", "0")
    assert_one_line_error(result, "No space left")
    assert report.read_text() == "the old report\n"
    assert sorted(p.name for p in mounted_tmpfs.iterdir()) == ["filler", "report.md"]


def folder_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_full_disk_keeps_the_old_export_folder(approved_db: Path, mounted_tmpfs: Path) -> None:
    """A folder export is written whole or not at all (atomic_write.replace_folder)."""
    folder = mounted_tmpfs / "dataset"
    assert run(approved_db, "export", "--format", "hf", "--out", str(folder)).exit_code == 0
    before = folder_files(folder)
    fill_up(mounted_tmpfs)
    result = run(approved_db, "export", "--format", "hf", "--out", str(folder))
    assert_one_line_error(result, "No space left", "dataset")
    assert folder_files(folder) == before
    assert sorted(p.name for p in mounted_tmpfs.iterdir()) == ["dataset", "filler"]


def test_a_folder_export_through_a_link_replaces_the_folder_it_names(
    approved_db: Path, tmp_path: Path
) -> None:
    real = tmp_path / "exports" / "task"
    real.parent.mkdir()  # the folder the export goes in (never made by vetbench)
    link = tmp_path / "task-link"
    link.symlink_to(real, target_is_directory=True)
    for _ in range(2):  # the second export replaces the first
        result = run(approved_db, "export", "--format", "lm-eval", "--out", str(link))
        assert result.exit_code == 0, result.output
    assert link.is_symlink() and (real / "vetbench-export.json").is_file()
    assert [p.name for p in real.parent.iterdir()] == ["task"]  # nothing staged or retired
    assert stat.S_IMODE(real.stat().st_mode) & 0o755 == 0o755


def test_a_missing_folder_is_refused_by_every_command_that_writes_not_created(
    approved_db: Path, tmp_path: Path
) -> None:
    """A typo in the folder of --out is refused in one line naming that folder, by every
    export and the report alike, and nothing is made; a folder export makes the folder
    it names, not the folders above it."""
    assert run(approved_db, "import", str(FIXTURES / "cflue_mcq.json")).exit_code == 0
    assert run(approved_db, "users", "add", "ann").exit_code == 0  # items wait for ann
    (tmp_path / "notes.txt").write_text("not a folder\n")
    before = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("test.db"))
    writes = {
        "econlogicqa": ("export", "--format", "econlogicqa", "--out"),
        "jsonl": ("export", "--format", "jsonl", "--status", "all", "--out"),
        "judging": ("export", "--format", "judging", "--as", "ann", "--out"),
        "hf": ("export", "--format", "hf", "--out"),
        "lm-eval": ("export", "--format", "lm-eval", "--out"),
        "report": ("report", "--bootstrap", "0", "--out"),
    }
    for name, command in writes.items():
        for out, refusal in (
            (f"exprots/{name}", "the folder exprots does not exist"),
            (f"exports/{name}/x", f"the folder exports/{name} does not exist"),
            (f"{tmp_path}/no/such/{name}", f"the folder {tmp_path}/no/such does not exist"),
            (f"notes.txt/{name}", "notes.txt is not a folder"),
        ):
            line = assert_one_line_error(run(approved_db, *command, out))
            assert line == f"error: cannot write {out}: {refusal}", name
    after = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("test.db"))
    assert after == before  # no folder, no staged file
    for name in ("hf", "lm-eval"):  # the folder named is made, in a folder that exists
        made = run(approved_db, *writes[name], name)
        assert made.exit_code == 0, made.output
        assert (tmp_path / name / "vetbench-export.json").is_file()


def test_a_folder_export_never_deletes_files_added_to_an_earlier_one(
    approved_db: Path, tmp_path: Path
) -> None:
    """A folder export replaces an earlier export whole, but files added to it since
    (notes, results) are named and the folder is left as it is; moved away, the export
    replaces the folder."""
    for name in ("hf", "lm-eval"):
        out = tmp_path / name
        assert run(approved_db, "export", "--format", name, "--out", str(out)).exit_code == 0
        (out / "notes.txt").write_text("mine\n")
        (out / "mine").mkdir()
        (out / "mine" / "results.json").write_text("{}\n")
        before = sorted(path.relative_to(out).as_posix() for path in out.rglob("*"))
        line = assert_one_line_error(
            run(approved_db, "export", "--format", name, "--out", str(out))
        )
        assert line == (
            f"error: {out}: holds files the earlier export did not write "
            "(mine/results.json, notes.txt); replacing the export would delete them: "
            "move them, or choose another folder"
        ), name
        assert sorted(path.relative_to(out).as_posix() for path in out.rglob("*")) == before
        (out / "notes.txt").unlink()
        shutil.rmtree(out / "mine")
        again = run(approved_db, "export", "--format", name, "--out", str(out))
        assert again.exit_code == 0, again.output


def test_no_export_or_report_replaces_a_database(approved_db: Path, tmp_path: Path) -> None:
    """--out naming the database being read (or its -wal, or any other SQLite database)
    is refused in one line by every file export and the report, and the database is
    left as it was; backup refuses it too, in its own words."""
    assert run(approved_db, "import", str(FIXTURES / "cflue_mcq.json")).exit_code == 0
    assert run(approved_db, "users", "add", "ann").exit_code == 0  # items wait for ann
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with sqlite3.connect(approved_db) as connection:  # in WAL mode, as vetbench opens it
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    wal = approved_db.with_name(approved_db.name + "-wal")
    wal.write_bytes(b"")  # as an open database has it
    before = {path: path.read_bytes() for path in (approved_db, other)}
    writes = {
        "econlogicqa": ("export", "--format", "econlogicqa", "--out"),
        "jsonl": ("export", "--format", "jsonl", "--status", "all", "--out"),
        "judging": ("export", "--format", "judging", "--as", "ann", "--out"),
        "report": ("report", "--bootstrap", "0", "--out"),
    }
    for name, command in writes.items():
        for out, refusal in (
            (approved_db, "it is a SQLite database"),
            (wal, f"it is a file of the SQLite database {approved_db.name}"),
            (other, "it is a SQLite database"),
        ):
            line = assert_one_line_error(run(approved_db, *command, str(out)))
            assert line == f"error: cannot write {out}: {refusal}; choose another file", name
    assert {path: path.read_bytes() for path in (approved_db, other)} == before
    assert run(approved_db, "stats").exit_code == 0
    assert_one_line_error(run(approved_db, "backup", str(approved_db), "--force"), "itself")


# --- 5. what PostgreSQL refuses is refused on both backends -------------------------------


@pytest.mark.parametrize(
    ("change", "place"),
    [
        ({"prompt": "a NUL \x00 inside"}, "prompt: holds a NUL byte"),
        ({"language": "x" * 17}, "language: is 17 characters long (limit 16)"),
        ({"source_ref": "r" * 256}, "source_ref: is 256 characters long (limit 255)"),
        ({"source": "s" * 256}, "source: is 256 characters long (limit 255)"),
        ({"meta": {"note": "\x00"}}, "meta.note: holds a NUL byte"),
        ({"revisions": None, "author": "\x00"}, "author:"),
    ],
)
def test_text_postgresql_refuses_is_refused_everywhere_with_its_place(
    database: Database, tmp_path: Path, change: dict[str, object], place: str
) -> None:
    record = {**json.loads(jsonl_lines(1).splitlines()[0]), **change}
    record = {key: value for key, value in record.items() if value is not None}
    if "source" in change:
        record["id"] = "own:1"
    path = tmp_path / "limits.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = import_files(database, [path]).files[0]
    assert report.rejected, report
    assert any(f"line 1: {place}" in problem for problem in report.problems), report.problems


def test_a_long_or_broken_name_is_refused(db_path: Path) -> None:
    assert run(db_path, "init").exit_code == 0
    for name in ("x" * 256, "evil\nlead  lead", f"a{ESC}[31mb", "\u202eadmin"):
        result = run(db_path, "users", "add", name)
        assert_one_line_error(result, "name")
        assert ESC not in result.output and "\n" not in result.stderr.strip()


# --- 6. escapes never reach the terminal --------------------------------------------------


def test_conflicts_and_listings_show_escapes_never_send_them(db_path: Path, tmp_path: Path) -> None:
    rows = ORDERING_CSV.read_text(encoding="utf-8-sig")
    hostile = tmp_path / "hostile.csv"
    header, first, *_ = rows.splitlines()
    question = first.split(",", 1)
    hostile.write_text(f'{header}\n"{ESC}[2J{OSC52}Q",{question[1].split(",", 1)[1]}\n')
    assert run(db_path, "import", str(hostile), "--source", f"src{ESC}]0;title\x07").exit_code in (
        0,
        1,
    )
    assert run(db_path, "import", str(ORDERING_CSV), "--source", "econ").exit_code == 0
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    database = open_database(db_path)
    for name, verdict in (("ann", "keep"), ("bob", "flawed")):
        submit_judgment(
            database,
            name,
            "econ:1",
            revision_number=None,
            blind_answer="BADC",
            verdict=verdict,
            comment=OSC52 * 30,
        )
    database.dispose()
    outputs = [
        run(db_path, "conflicts", "--as", "lena"),
        run(db_path, "items"),
        run(db_path, "stats"),
        run(db_path, "users", "list"),
        run(db_path, "agreement", "--as", "lena", "--bootstrap", "0"),
        run(db_path, "report", "--bootstrap", "0"),
    ]
    for result in outputs:
        assert result.exit_code == 0, result.output
        for control in (ESC, "\x07", "\x9b"):
            assert control not in result.output
    conflicts = outputs[0].stdout
    assert "␛]52;c;" in conflicts and "…" in conflicts  # shown, and a long comment cut


# --- 7. passwords and servers that never answer --------------------------------------------


def test_a_url_password_is_never_printed(db_path: Path) -> None:
    url = "postgresql+psycopg://alice:S3cret@127.0.0.1:1/x"
    result = run_process("--db", url, "stats", timeout=60)
    line = assert_one_line_error(result, "alice:***@127.0.0.1:1")
    assert "S3cret" not in result.stderr.decode() + result.stdout.decode()
    assert "cannot connect" in line


def test_a_server_that_never_answers_times_out_with_one_line() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)  # accepts connections (the kernel completes them) and never answers
    port = listener.getsockname()[1]
    try:
        url = f"postgresql+psycopg://alice:S3cret@127.0.0.1:{port}/x"
        result = run_process("--db", url, "--connect-timeout", "2", "stats", timeout=60)
    finally:
        listener.close()
    line = assert_one_line_error(result, "no answer within 2 s", f"127.0.0.1:{port}")
    assert "S3cret" not in line


# --- 8. a locked database says so, then gives up with one line ------------------------------


def test_a_writer_waits_visibly_then_gives_up(approved_db: Path) -> None:
    holder = sqlite3.connect(approved_db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = run_process(
            "--db", str(approved_db), "--lock-timeout", "2", "users", "add", "zoe", timeout=60
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    stderr = result.stderr.decode()
    assert "waiting for another writer…" in stderr
    assert_one_line_error(result, "locked by another writer", "gave up after 2 s")


# --- 9. expected faults are one line -------------------------------------------------------


def test_a_full_disk_during_import_is_one_line_without_sql(mounted_tmpfs: Path) -> None:
    db = mounted_tmpfs / "full.db"
    assert run(db, "init").exit_code == 0
    big = mounted_tmpfs.parent / "big.jsonl"
    big.write_text(jsonl_lines(4000), encoding="utf-8")
    result = run(db, "import", str(big))
    line = assert_one_line_error(result, "full")
    assert "INSERT" not in result.output and len(line) < 300
    assert len(result.output) < 2000


def test_a_read_only_database_opens_read_only_and_refuses_writes(
    approved_db: Path, mounted_tmpfs: Path
) -> None:
    db = mounted_tmpfs / "ro.db"
    source = sqlite3.connect(approved_db)
    source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    source.close()
    db.write_bytes(approved_db.read_bytes())
    remount_read_only(mounted_tmpfs)
    stats = run(db, "stats")
    assert stats.exit_code == 0, stats.output
    assert "opened read-only" in stats.stderr and "items:" in stats.stdout
    assert_one_line_error(run(db, "users", "add", "zoe"), "read-only")


def test_an_unwritable_model_cache_is_a_clear_error(
    tmp_path: Path, mounted_tmpfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaluator.demo_model import ModelCacheError, convert_gguf

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 64)
    remount_read_only(mounted_tmpfs)
    monkeypatch.setenv("VETBENCH_CACHE", str(mounted_tmpfs / "cache"))
    with pytest.raises(ModelCacheError, match="VETBENCH_CACHE"):
        convert_gguf(gguf)


# --- 10. only init, import and users add create a database --------------------------------


def test_a_mistyped_database_is_refused_not_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_one_line_error(run(tmp_path / "typo.db", "stats"), "no database at", "vetbench init")
    assert not (tmp_path / "typo.db").exists()
    monkeypatch.setenv("VETBENCH_DB", "not a url")
    result = CliRunner().invoke(cli, ["items"])
    assert_one_line_error(result, "no database at")
    assert not (tmp_path / "not a url").exists()
    created = run(tmp_path / "new.db", "init")
    assert created.exit_code == 0 and "created" in created.stdout
    new_db = tmp_path / "new.db"  # the next steps, naming the database as it was named
    assert f"next: vetbench --db {new_db} import FILE (" in created.stdout
    assert f"then vetbench --db {new_db} review --as NAME" in created.stdout
    again = run(tmp_path / "new.db", "init")
    assert "up to date" in again.stdout


def test_a_database_in_a_missing_folder_or_a_relative_url_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sqlite:///tmp/x.db is the relative path tmp/x.db (SQLAlchemy's absolute one takes
    four slashes): the refusal says where that is; a database whose folder is missing or
    is a file says which, instead of "cannot open the database file"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.csv").write_text("Question,A,B,Answer\n", encoding="utf-8")
    assert_one_line_error(
        run("sqlite:///tmp/x.db", "stats"),
        f"no database at tmp/x.db (relative to {tmp_path}; sqlite:////tmp/x.db would be /tmp/x.db)",
    )
    assert "sqlite:////" not in assert_one_line_error(run("sqlite:///x.db", "stats"), "x.db")
    assert_one_line_error(
        run("sqlite:///tmp/x.db", "init"),
        "relative to",
        "the folder tmp does not exist; vetbench creates the database file, not its folder",
    )
    assert_one_line_error(
        run(tmp_path / "typo" / "new.db", "import", str(ORDERING_CSV)),
        f"the folder {tmp_path / 'typo'} does not exist",
    )
    assert_one_line_error(
        run(tmp_path / "data.csv" / "new.db", "users", "add", "zoe"),
        f"{tmp_path / 'data.csv'} is a file, not a folder",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]  # nothing created


def test_a_database_vetbench_cannot_use_is_named_with_what_it_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for url in ("mysql://ann:S3cret@db/x", "http://db.example.org/x"):
        line = assert_one_line_error(run(url, "stats"), "SQLite", "postgresql+psycopg://")
        assert "S3cret" not in line
    for url in ("postgresql+pg8000://u@h/x", "postgresql+psycopg2://u@h/x"):
        driver = url.split("+")[1].split(":")[0]
        assert_one_line_error(run(url, "init"), f"its driver {driver} is not installed")
    assert_one_line_error(run("", "init"), "--db is empty")
    assert list(tmp_path.iterdir()) == []  # nothing was created in the working folder


@pytest.mark.parametrize("journal_mode", ["delete", "wal"])
def test_another_programs_sqlite_file_is_refused_unchanged(
    tmp_path: Path, journal_mode: str
) -> None:
    """Nothing left beside it either (in WAL mode, a read-only look makes -wal and -shm)."""
    foreign = tmp_path / "other.db"
    with closing(sqlite3.connect(foreign)) as connection, connection:
        connection.execute(f"PRAGMA journal_mode = {journal_mode}")
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.execute("INSERT INTO notes (body) VALUES ('keep me')")
    before = foreign.read_bytes()
    for args in (("stats",), ("import", str(ORDERING_CSV)), ("init",)):
        assert_one_line_error(run(foreign, *args), "not a vetbench database")
    assert foreign.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


FUTURE_REVISION = "0042_from_a_newer_vetbench"


def stamp_future_revision(url: str) -> None:
    database = open_database(url)
    with database.engine.begin() as connection:
        connection.execute(
            sa_text("UPDATE alembic_version SET version_num = :revision"),
            {"revision": FUTURE_REVISION},
        )
    database.dispose()


def stamped(url: str) -> list[str]:
    database = open_database(url, migrate=False)
    with database.engine.connect() as connection:
        versions = connection.execute(sa_text("SELECT version_num FROM alembic_version"))
        found = [str(version) for (version,) in versions]
    database.dispose()
    return found


def test_a_database_from_a_newer_vetbench_is_one_line_and_left_unchanged(
    database_url: str,
) -> None:
    """A schema revision this code does not know (a newer vetbench, another branch) used to
    end in Alembic's traceback: now one line naming the revision, and nothing written."""
    stamp_future_revision(database_url)
    with pytest.raises(UnknownSchema, match=FUTURE_REVISION):
        open_database(database_url)
    for args in (("stats",), ("import", str(ORDERING_CSV)), ("init",)):
        assert_one_line_error(run(database_url, *args), FUTURE_REVISION, "upgrade vetbench")
    assert stamped(database_url) == [FUTURE_REVISION]


def test_a_read_only_database_from_a_newer_vetbench_says_so_too(
    tmp_path: Path, mounted_tmpfs: Path
) -> None:
    made = tmp_path / "newer.db"
    stamp_future_revision(str(made))
    db = mounted_tmpfs / "newer.db"
    db.write_bytes(made.read_bytes())
    remount_read_only(mounted_tmpfs)
    line = assert_one_line_error(run(db, "stats"), FUTURE_REVISION, "upgrade vetbench")
    assert "needs a schema upgrade" not in line


# --- 11. small things -------------------------------------------------------------------------


def test_an_absurd_overlap_is_refused(db_path: Path) -> None:
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    result = run(db_path, "config", "set", "overlap", "99999999999999999999999", "--as", "lena")
    assert_one_line_error(result, "at most 100")


def test_a_refused_setting_is_quoted_short_and_on_one_line(db_path: Path) -> None:
    """A long license names its real limit; a refused value is quoted on one line and
    cut, never echoed whole (a pasted file of 100,000 characters was)."""
    assert run(db_path, "users", "add", "lena", "--role", "lead").exit_code == 0
    line = assert_one_line_error(
        run(db_path, "config", "set", "license", "a" * 100_000, "--as", "lena")
    )
    assert line == f"error: license is 100,000 characters long (limit 64): '{'a' * 39}…'"
    assert run(db_path, "config", "set", "license", "a" * 64, "--as", "lena").exit_code == 0
    line = assert_one_line_error(
        run(db_path, "config", "set", "overlap", "2\n" * 50, "--as", "lena")
    )
    assert line == f"error: overlap must be a whole number, got '{'2␊' * 19}2…'"
