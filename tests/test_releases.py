"""Releases: frozen, hashed versions of the benchmark (``vetbench release ...``), on SQLite
and PostgreSQL.  A release made, then followed by an edit and a rejection, still exports
exactly as frozen, verifies, and its diff names the edit and the rejection with their
reasons; nothing can change a release once made."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import sqlalchemy as sa
from eval_helpers import mixed_set, ok
from helpers import FIXTURES, run_cli, store_item, store_person
from test_privileges import Team, raw, run, team  # noqa: F401  (team is a fixture)

from db.engine import Database
from db.items import iter_items
from db.models import Release, ReleaseItem
from db.releases import (
    ReleaseError,
    ReleaseRequest,
    item_set_hash,
    release_items,
    snapshot_hash,
    verify_release,
)
from db.vocabulary import Role
from reviewer.adjudication import decide
from reviewer.judging import ItemEdit, edit_item
from reviewer.releases import create_release, diff_releases


@pytest.fixture
def released(database: Database) -> Database:
    """The mixed set (8 approved items), a lead and an annotator, and release v1 of it."""
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    store_person(database, "alice")
    ok(run_cli(database, "release", "create", "v1", "--as", "lena", "--note", "first"))
    return database


def _edit_and_reject(database: Database) -> None:
    edit_item(
        database,
        "lena",
        "econ:1",
        ItemEdit(note="fixed a typo in event B", choices=None, prompt="Order these events."),
    )
    decide(database, "lena", "econ:1", "approved")
    decide(database, "lena", "cflue:2", "rejected", reason="flawed", comment="needs a table")


def test_the_hash_is_over_ids_and_content_hashes_in_id_order(released: Database) -> None:
    with released.session() as session:
        items = release_items(session, "v1")
        stored = session.get(Release, "v1")
    assert stored is not None and stored.item_count == 8 == len(items)
    assert [item.id for item in items] == sorted(item.id for item in items)
    # the documented formula: SHA-256 of canonical JSON, written out here
    hashes = [
        [
            item.id,
            _sha256(
                {
                    "choices": [[label, text] for label, text in item.choices.items()],
                    "explanation": item.explanation,
                    "key": item.key,
                    "kind": item.kind.value,
                    "language": item.language,
                    "prompt": item.prompt,
                }
            ),
        ]
        for item in items
    ]
    assert [snapshot_hash(item) for item in items] == [digest for _, digest in hashes]
    assert stored.hash == _sha256(hashes) == item_set_hash(map(tuple, reversed(hashes)))
    # the order of the choices is part of what was reviewed
    swapped = dict(reversed(list(items[0].choices.items())))
    assert snapshot_hash(replace(items[0], choices=swapped)) != hashes[0][1]


def _sha256(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_after_an_edit_and_a_rejection_the_release_stays_as_frozen(
    released: Database, tmp_path: Path
) -> None:
    with released.session() as session:
        before = release_items(session, "v1")
    _edit_and_reject(released)
    with released.session() as session:
        after = release_items(session, "v1")
        assert verify_release(session, "v1").ok
    assert after == before
    econ = next(item for item in after if item.id == "econ:1")
    assert econ.revision == 1 and econ.prompt != "Order these events."
    assert ok(run_cli(released, "release", "verify", "v1")).output.startswith("matches release v1")

    ok(run_cli(released, "release", "create", "v2", "--as", "lena"))
    with released.session() as session:
        diff = diff_releases(session, "v1", "v2")
    assert [(c.item_id, c.change) for c in diff.changes] == [
        ("cflue:2", "removed"),
        ("econ:1", "changed"),
    ]
    removed, changed = diff.changes
    assert any("rejected (flawed)" in r and "needs a table" in r for r in removed.reasons)
    assert any("fixed a typo in event B" in r for r in changed.reasons)
    assert "-  " in "\n".join(changed.text_diff) and "+  Order these events." in changed.text_diff
    markdown = ok(run_cli(released, "release", "diff", "v1", "v2")).output
    assert "1 removed, 1 changed, 6 unchanged" in markdown
    assert "rejected (flawed)" in markdown and "fixed a typo in event B" in markdown
    as_json = json.loads(ok(run_cli(released, "release", "diff", "v1", "v2", "--json")).output)
    assert (as_json["added"], as_json["removed"], as_json["changed"]) == (0, 1, 1)


@pytest.mark.parametrize(
    ("format_name", "kind", "name"),
    [
        ("jsonl", None, "v1.jsonl"),
        ("econlogicqa", "ordering", "v1.csv"),
        ("cflue", None, "v1.json"),
    ],
)
def test_every_file_export_of_a_release_is_as_frozen_and_verifies(
    released: Database, tmp_path: Path, format_name: str, kind: str | None, name: str
) -> None:
    _edit_and_reject(released)
    out = tmp_path / name
    args = ["export", "--format", format_name, "--out", str(out), "--release", "v1"]
    if format_name == "cflue":
        args += ["--kind", "single", "--kind", "multi", "--kind", "truefalse"]
    elif kind:
        args += ["--kind", kind]
    ok(run_cli(released, *args))
    text = out.read_text(encoding="utf-8")
    assert "Order these events." not in text  # the edit came after the release
    with released.session() as session:
        release_hash = verify_release(session, "v1").stored_hash
    assert release_hash in text
    result = ok(run_cli(released, "release", "verify", "--export", str(out)))
    if format_name == "jsonl":
        assert "matches release v1" in result.output
    else:  # a part of it: the kinds the format holds
        assert re.search(r"matches the [a-z, ]+ items of release v1: \d+ of its", result.output)

    # an export altered by hand no longer verifies, and says which item
    if format_name == "jsonl":
        altered = text.replace("econ:1", "econ:1", 1).replace('"key":"DACB"', '"key":"ABCD"', 1)
    elif format_name == "econlogicqa":
        altered = text.replace("D, A, C, B", "A, B, C, D", 1)
    else:
        altered = text.replace('"answer": "B"', '"answer": "A"', 1)
    assert altered != text
    out.write_text(altered, encoding="utf-8")
    refused = run_cli(released, "release", "verify", "--export", str(out))
    assert refused.exit_code == 1 and "does NOT match" in refused.output
    assert "differs from the release's" in refused.output


def test_a_release_never_changes(released: Database) -> None:
    with (
        released.engine.connect() as connection,
        pytest.raises(sa.exc.DBAPIError) as refused,
        connection.begin(),
    ):
        connection.execute(sa.update(Release).values(note="changed"))
    assert "a release never changes" in str(refused.value)
    for statement in (
        sa.delete(ReleaseItem),
        sa.update(ReleaseItem).values(revision_number=2),
        sa.insert(ReleaseItem).values(
            release_name="v1",
            item_id="shots:1",
            revision_number=1,
            content_hash="0" * 64,
            language="en",
            status="agreed",
        ),
    ):
        with (
            released.engine.connect() as connection,
            pytest.raises(sa.exc.DBAPIError) as refused,
            connection.begin(),
        ):
            connection.execute(statement)
        assert "a release never changes" in str(refused.value)
    with released.session() as session:
        assert verify_release(session, "v1").ok


def test_names_are_unique_leads_only_and_audited(released: Database) -> None:
    again = run_cli(released, "release", "create", "v1", "--as", "lena")
    assert again.exit_code == 1 and "exists already" in again.output
    for look_alike in ("V1", "\uff56\uff11"):  # other case, full-width: cited, they read as v1
        alike = run_cli(released, "release", "create", look_alike, "--as", "lena")
        assert alike.exit_code == 1 and "from release 'v1', which exists already" in alike.output
    refused = run_cli(released, "release", "create", "v9", "--as", "alice")
    assert refused.exit_code == 1 and "only leads can create releases" in refused.output
    with pytest.raises(ReleaseError, match="no items to release"):
        create_release(released, ReleaseRequest("empty", statuses=("rejected",)), lead="lena")
    decide(released, "lena", "econ:1", "rejected", reason="flawed")  # one order is left
    one = ok(run_cli(released, "release", "create", "one", "--as", "lena", "--kind", "ordering"))
    assert "release one: 1 item, hash " in one.output
    audit = json.loads(ok(run_cli(released, "audit", "--json")).output)
    events = [event for event in audit if event["action"] == "release"]
    assert [(e["target"], e["person"], e["changes"]["items"]) for e in events] == [
        ("v1", "lena", 8),
        ("one", "lena", 1),
    ]


def test_a_release_of_every_status_is_asked_with_status_all(released: Database) -> None:
    """``--status all``, as ``items``, ``export``, ``eval`` and ``triage`` take it."""
    store_item(released, "extra:1")  # pending
    made = json.loads(
        ok(
            run_cli(
                released, "release", "create", "all", "--status", "all", "--as", "lena", "--json"
            )
        ).output
    )
    every = json.loads(ok(run_cli(released, "items", "--json")).output)
    assert len({item["status"] for item in every}) > 1 and "extra:1" in str(every)
    assert made["items"] == len(every) > 8 and made["selection"]["status"] == []


def test_list_and_show(released: Database) -> None:
    listed = ok(run_cli(released, "release", "list")).output
    assert listed.startswith("v1") and "8 items" in listed and "first" in listed
    shown = json.loads(ok(run_cli(released, "release", "show", "v1", "--json")).output)
    assert shown["by_kind"] == {"multi": 2, "ordering": 2, "single": 2, "truefalse": 2}
    assert shown["by_source"] == {"cflue": 6, "econ": 2}
    assert set(shown["figures"]) == {"agreement", "flags", "removed_by_reason"}
    text = ok(run_cli(released, "release", "show", "v1")).output
    assert shown["hash"] in text and "Krippendorff's alpha, verdicts: " in text
    # The review figures say what they count: the whole review of the release's kinds and
    # sources, not its items alone.
    agreement = shown["figures"]["agreement"]
    assert (
        "  review behind it: items of every kind, whatever their status: "
        f"{agreement['judgments']} judgments of {agreement['items_judged']} items by "
        f"{agreement['annotators']} annotators\n"
    ) in text
    unknown = run_cli(released, "release", "show", "v7")
    assert unknown.exit_code == 1 and "no release named 'v7' (releases: v1)" in unknown.output


def test_the_list_keeps_its_columns_beside_a_chinese_name(released: Database) -> None:
    """A Chinese character takes two terminal cells: the hashes stay in one column."""
    from db.visible_text import east_asian_cell_len

    ok(run_cli(released, "release", "create", "发布二", "--as", "lena"))
    lines = ok(run_cli(released, "release", "list")).output.splitlines()
    assert [line.split()[0] for line in lines] == ["v1", "发布二"]
    hash_cells = {east_asian_cell_len(line[: line.index(line.split()[1])]) for line in lines}
    assert len(hash_cells) == 1, lines


def test_sqlite_triggers_hold_for_raw_sql(tmp_path: Path) -> None:
    from db.engine import open_database

    database = open_database(tmp_path / "r.db")
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    create_release(database, ReleaseRequest("v1"), lead="lena")
    database.dispose()
    connection = sqlite3.connect(tmp_path / "r.db")
    with pytest.raises(sqlite3.IntegrityError, match="a release never changes"):
        connection.execute("DELETE FROM release")
    with pytest.raises(sqlite3.IntegrityError, match="a release never changes"):
        connection.execute("UPDATE release_item SET content_hash = 'x'")
    connection.close()


@pytest.mark.postgres
def test_postgres_roles_annotators_cannot_make_or_change_releases(team: Team) -> None:  # noqa: F811
    alice, lena = team.url(team.alice), team.url(team.lena)
    release_sql = (
        "INSERT INTO release (name, hash, note, selection, item_count, figures, "
        "created_by_id, created_at) VALUES (:name, :hash, '', '{}', 0, '{}', :person, now())"
    )
    item_sql = (
        "INSERT INTO release_item (release_name, item_id, revision_number, content_hash, "
        "language, status) VALUES (:name, 'o:1', 1, :hash, 'en', 'pending')"
    )
    for statement in (release_sql, item_sql):
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied for table release"):
            raw(alice, statement, name="forged", hash="0" * 64, person=team.person_id(team.alice))
    refused = run(alice, "release", "create", "r1", "--status", "pending")
    assert refused.exit_code == 1 and "only leads can create releases" in refused.output

    made = run(lena, "release", "create", "r1", "--status", "pending", "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.output)["created_by"] == team.lena
    # a lead cannot alter a release either: no grant to update or delete, and items
    # cannot be slipped into a release once it exists
    for statement in ("UPDATE release SET note = 'x'", "DELETE FROM release_item"):
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            raw(lena, statement)
    with pytest.raises(sa.exc.ProgrammingError, match="a release never changes"):
        raw(lena, item_sql.replace("'o:1'", "'o:2'"), name="r1", hash="0" * 64)
    # nor make one in another person's name
    with pytest.raises(sa.exc.ProgrammingError, match="row-level security"):
        raw(lena, release_sql, name="r2", hash="0" * 64, person=team.person_id(team.alice))
    verified = run(alice, "release", "verify", "r1")
    assert verified.exit_code == 0 and "matches release r1: 2 items" in verified.output


def test_a_release_export_imports_cleanly_elsewhere(released: Database, tmp_path: Path) -> None:
    from db.engine import open_database
    from db.items import iter_items

    csv_file, cflue_file = tmp_path / "econ.csv", tmp_path / "cflue.json"
    for out, format_name, kinds in (
        (csv_file, "econlogicqa", ["ordering"]),
        (cflue_file, "cflue", ["single", "multi", "truefalse"]),
    ):
        kind_args = [arg for kind in kinds for arg in ("--kind", kind)]
        ok(
            run_cli(
                released,
                "export",
                "--format",
                format_name,
                "--out",
                str(out),
                "--release",
                "v1",
                *kind_args,
            )
        )
    ok(run_cli(tmp_path / "elsewhere.db", "import", str(csv_file), str(cflue_file)))
    other = open_database(tmp_path / "elsewhere.db")
    with other.session() as session:
        items = list(iter_items(session))
    other.dispose()
    assert len(items) == 8
    # the stamp names the export, not the item: it is not kept as the item's extras
    assert all("vetbench" not in json.dumps(item.meta) for item in items)


def _export_every_format(database: Database, out: Path) -> dict[str, bytes]:
    """Release v1 exported in every format under ``out``: each file's bytes by its path,
    the folder manifests without their documented export time."""
    out.mkdir()
    for format_name, kinds, name in (
        ("jsonl", (), "v1.jsonl"),
        ("econlogicqa", ("ordering",), "v1.csv"),
        ("cflue", ("single",), "v1.json"),
        ("hf", (), "hf"),
        ("lm-eval", (), "lm"),
    ):
        kind_args = [arg for kind in kinds for arg in ("--kind", kind)]
        target = str(out / name)
        ok(
            run_cli(
                database,
                "export",
                "--format",
                format_name,
                "--out",
                target,
                "--release",
                "v1",
                *kind_args,
            )
        )
    files: dict[str, bytes] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "vetbench-export.json":
            manifest = json.loads(data)
            del manifest["created_at"]
            data = json.dumps(manifest, sort_keys=True).encode()
        files[str(path.relative_to(out))] = data
    return files


def test_a_release_exports_the_same_bytes_after_a_re_import(
    database: Database, tmp_path: Path
) -> None:
    # The tester's probe: a re-import revised an item of release v1 into a near-copy of
    # another (a duplicate link), and a later export of v1 carried the new link; a
    # re-import's metadata (CFLUE's exam name, each record's place) likewise.
    csv_file, cflue_file = tmp_path / "econ_ordering.csv", tmp_path / "cflue_mcq.json"
    csv_file.write_text((FIXTURES / "econ_ordering.csv").read_text(encoding="utf-8"), "utf-8")
    records = json.loads((FIXTURES / "cflue_mcq.json").read_text(encoding="utf-8"))
    cflue_file.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    store_person(database, "lena", Role.LEAD)
    ok(run_cli(database, "import", str(csv_file), str(cflue_file), "--as", "lena"))
    for item in ("econ_ordering:1", "cflue_mcq:1"):
        ok(run_cli(database, "decide", item, "--as", "lena", "--status", "approved"))
    ok(run_cli(database, "release", "create", "v1", "--as", "lena"))
    before = _export_every_format(database, tmp_path / "before")

    header, rows = csv_file.read_text(encoding="utf-8").split("\n", 1)
    rows = rows.replace("responds to a sharp rise", "responds to a steep rise")
    # A blank line moves every record one line down, and another exam name: metadata only.
    csv_file.write_text(f"{header}\n\n{rows}", encoding="utf-8")
    renamed = [{**records[0], "名称": "另一考试"}, *records[1:]]
    cflue_file.write_text(json.dumps(renamed, ensure_ascii=False), encoding="utf-8")
    ok(
        run_cli(
            database, "import", str(csv_file), str(cflue_file), "--revise-reviewed", "--as", "lena"
        )
    )
    with database.session() as session:
        now = {item.id: item for item in iter_items(session)}
    assert now["econ_ordering:1"].suspected_duplicate_of == "econ_ordering:34"
    assert now["econ_ordering:2"].source_ref == "line 4"
    assert now["cflue_mcq:1"].meta["名称"] == "另一考试" and now["cflue_mcq:1"].revision == 1

    after = _export_every_format(database, tmp_path / "after")
    assert after == before
    jsonl = [json.loads(line) for line in before["v1.jsonl"].decode().splitlines()]
    assert [(r["id"], r["source_ref"], r["meta"]) for r in jsonl] == [
        ("cflue_mcq:1", "record 1", {"名称": records[0]["名称"]}),
        ("econ_ordering:1", "line 2", {}),
    ]
    # A release freezes no duplicate link: its export states none, true or false.
    assert not any("suspected_duplicate_of" in record for record in jsonl)
    verified = ok(
        run_cli(database, "release", "verify", "--export", str(tmp_path / "after/v1.jsonl"))
    )
    assert "matches release v1" in verified.output


_RELEASE_OF_0023 = (
    "INSERT INTO person (name, role, created_at) VALUES ('lena', 'lead', CURRENT_TIMESTAMP)",
    "INSERT INTO item (id, kind, source, source_ref, language, status, current_revision, meta, "
    "created_at) VALUES ('o:1', 'ordering', 'o', 'line 7', 'en', 'pending', 1, "
    '\'{"exam": "x"}\', CURRENT_TIMESTAMP)',
    "INSERT INTO item_revision (item_id, number, kind, prompt, choices, key, author, "
    "change_note, provenance, created_at) VALUES ('o:1', 1, 'ordering', 'Order them.', "
    "'{\"A\": \"a\", \"B\": \"b\"}', 'AB', 'x', 'import', '{}', CURRENT_TIMESTAMP)",
    "INSERT INTO release_item (release_name, item_id, revision_number, content_hash, language, "
    "status) VALUES ('v0', 'o:1', 1, 'deadbeef', 'en', 'approved')",
    "INSERT INTO audit_event (actor, action, target, payload, os_login, host, created_at) "
    "VALUES ('lena', 'release', 'v0', '{}', '', '', CURRENT_TIMESTAMP)",
    "INSERT INTO release (name, hash, note, selection, item_count, figures, created_by_id, "
    "created_at) VALUES ('v0', 'feed', '', '{}', 1, '{}', "
    "(SELECT id FROM person WHERE name = 'lena'), CURRENT_TIMESTAMP)",
)


def test_the_upgrade_freezes_an_older_releases_metadata_as_it_stands(database_url: str) -> None:
    from test_raw_sql_guards import upgrade_past

    from db.engine import make_engine

    engine = make_engine(database_url)
    try:
        upgrade_past(engine, "0023_raw_sql_guards", _RELEASE_OF_0023)
        with engine.begin() as connection:
            # What the item holds at the upgrade; later changes no longer reach the release.
            connection.execute(sa.text("UPDATE item SET source_ref = 'line 9', meta = '{}'"))
        with engine.connect() as connection:
            frozen = connection.execute(sa.text("SELECT source_ref, meta FROM release_item"))
            source_ref, meta = frozen.one()
            assert (source_ref, meta if isinstance(meta, dict) else json.loads(meta)) == (
                "line 7",
                {"exam": "x"},
            )
        # The trigger that refuses updates is back.
        refused = pytest.raises(sa.exc.DatabaseError, match="a release never changes")
        with refused, engine.begin() as connection:
            connection.execute(sa.text("UPDATE release_item SET source_ref = 'line 1'"))
    finally:
        engine.dispose()
