"""`vetbench release verify --export` checks an export against what it says it holds: an
item given twice does not match (both places named), nor does an export with a kind or a
folder's rows removed; a legit part of a release (`--kind`, a one-kind format) is said to
be that part, never the release; a file vetbench did not write is refused in one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import mixed_set, ok
from helpers import run_cli, store_person

from db.engine import Database
from db.vocabulary import Role


@pytest.fixture
def released(database: Database) -> Database:
    mixed_set(database)
    store_person(database, "lena", Role.LEAD)
    ok(run_cli(database, "release", "create", "v1", "--as", "lena"))
    return database


def _export(database: Database, out: Path, *args: str) -> Path:
    ok(run_cli(database, "export", "--release", "v1", "--out", str(out), *args))
    return out


def _verify(database: Database, out: Path, *args: str) -> tuple[int, str]:
    result = run_cli(database, "release", "verify", "--export", str(out), *args)
    return result.exit_code, result.output


def test_an_item_given_twice_does_not_match_naming_both_places(
    released: Database, tmp_path: Path
) -> None:
    out = _export(released, tmp_path / "v1.jsonl")
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "same.jsonl").write_text("".join(lines + lines[:1]), encoding="utf-8")
    code, output = _verify(released, tmp_path / "same.jsonl")
    item = json.loads(lines[0])["id"]
    last = len(lines) + 1
    assert code == 1 and "does NOT match release v1" in output
    assert f"line {last}: {item}: appears again (first at line 1)" in output
    changed = lines[0].replace('"prompt":"', '"prompt":"X', 1)
    (tmp_path / "changed.jsonl").write_text("".join(lines + [changed]), encoding="utf-8")
    code, output = _verify(released, tmp_path / "changed.jsonl")
    assert code == 1 and f"line {last}: {item}: its text or key differs" in output


def test_a_csv_row_or_hf_row_given_twice_does_not_match(released: Database, tmp_path: Path) -> None:
    csv = _export(released, tmp_path / "o.csv", "--format", "econlogicqa", "--kind", "ordering")
    rows = csv.read_text(encoding="utf-8").splitlines(keepends=True)
    csv.write_text("".join(rows + rows[1:2]), encoding="utf-8")
    code, output = _verify(released, csv)
    assert code == 1 and f"line {len(rows) + 1}: econ:" in output
    assert "appears again (first at line 2)" in output

    hf = _export(released, tmp_path / "hf", "--format", "hf")
    data = hf / "data" / "test.jsonl"
    data.write_text(data.read_text(encoding="utf-8") * 2, encoding="utf-8")
    code, output = _verify(released, hf)
    assert code == 1 and "data/test.jsonl: line 9:" in output
    assert "first at data/test.jsonl: line 1" in output


def test_an_export_with_a_kind_removed_does_not_match(released: Database, tmp_path: Path) -> None:
    out = _export(released, tmp_path / "v1.jsonl")
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["kind"] != "ordering"]
    assert 0 < len(kept) < len(lines)
    out.write_text("".join(kept), encoding="utf-8")
    code, output = _verify(released, out)
    assert code == 1 and "items of release v1 are missing" in output
    assert "does NOT match release v1" in output
    answer = json.loads(_verify(released, out, "--json")[1])
    assert answer["ok"] is False and answer["subset"] is False


def test_a_folder_whose_data_lost_rows_does_not_match_its_manifest(
    released: Database, tmp_path: Path
) -> None:
    hf = _export(released, tmp_path / "hf", "--format", "hf")
    data = hf / "data" / "test.jsonl"
    rows = data.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [row for row in rows if json.loads(row)["kind"] != "ordering"]
    data.write_text("".join(kept), encoding="utf-8")
    manifest_path = hf / "vetbench-export.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for key in ("kinds", "sources"):  # as an export made before they were recorded
        del manifest[key]
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    code, output = _verify(released, hf)
    assert code == 1 and "does NOT match release v1" in output
    assert f"says the export holds {len(rows)} items, its data holds {len(kept)}" in output


def test_a_part_of_a_release_is_said_to_be_that_part(released: Database, tmp_path: Path) -> None:
    out = _export(released, tmp_path / "o.jsonl", "--kind", "ordering")
    ordering = len(out.read_text(encoding="utf-8").splitlines())
    code, output = _verify(released, out)
    assert code == 0 and "matches release v1" not in output
    assert f"matches the ordering items of release v1: {ordering} of its 8 items" in output
    answer = json.loads(_verify(released, out, "--json")[1])
    assert answer["ok"] is True and answer["subset"] is True
    assert answer["part"] == "the ordering items" and answer["release_items"] == 8
    assert answer["recomputed_hash"] == answer["expected_hash"] != answer["hash"]

    # an ordering item removed from that part is missing
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    out.write_text("".join(lines[1:]), encoding="utf-8")
    code, output = _verify(released, out)
    assert code == 1 and "1 of the ordering items of release v1 is missing" in output


def test_an_export_without_a_recorded_selection_is_a_part_not_the_release(
    released: Database, tmp_path: Path
) -> None:
    out = _export(released, tmp_path / "v1.jsonl")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for record in records:
        del record["vetbench_selection"]  # as an export made before it was recorded
    kept = [record for record in records if record["kind"] == "ordering"]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), "utf-8")
    code, output = _verify(released, out)
    assert code == 0 and "matches release v1" not in output
    assert "matches the ordering items" in output  # of the sources it holds
    assert f"of release v1: {len(kept)} of its 8 items" in output
    assert "does not record which kinds and sources were selected" in output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "e.jsonl: the file is empty; not an export vetbench wrote"),
        (
            '{"id": "econ:1", "kind": "ordering", "language": "en", "current_revision": 1,'
            ' "vetbench_release": "v1"}\n',
            "e.jsonl: line 1: has no revisions field; not a record vetbench wrote",
        ),
        ("[1, 2]\n", "e.jsonl: record 1: not a JSON object; not a record vetbench wrote"),
    ],
)
def test_a_file_vetbench_did_not_write_is_refused_in_one_sentence(
    released: Database, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(text, encoding="utf-8")
    code, output = _verify(released, path)
    assert code == 1 and output.strip().endswith(message), output
    assert "Error(" not in output and len(output.strip().splitlines()) == 1


def _rewrite_first_doc(data: Path, change: dict[str, object]) -> str:
    """Give the first document of a JSON Lines data file the fields ``change``; its id."""
    lines = data.read_text(encoding="utf-8").splitlines(keepends=True)
    doc = json.loads(lines[0])
    doc.update(change)
    lines[0] = json.dumps(doc, ensure_ascii=False) + "\n"
    data.write_text("".join(lines), encoding="utf-8")
    return str(doc["id"])


def test_the_lm_eval_score_mode_tasks_are_checked_as_the_generation_tasks_are(
    released: Database, tmp_path: Path
) -> None:
    """lm-eval scores its `multiple_choice` tasks by `target_index` among `choice_texts`:
    a copy of each item the generation tasks do not vouch for."""
    out = _export(released, tmp_path / "lm", "--format", "lm-eval")
    assert _verify(released, out)[0] == 0
    manifest = json.loads((out / "vetbench-export.json").read_text(encoding="utf-8"))
    single = next(task for task in manifest["score_tasks"] if "single" in task)
    data = out / "data" / f"{single}.jsonl"
    original = data.read_text(encoding="utf-8")
    first = json.loads(original.splitlines()[0])
    wrong = (first["target_index"] + 1) % len(first["candidates"])

    item = _rewrite_first_doc(data, {"target_index": wrong})
    code, output = _verify(released, out)
    assert code == 1 and "does NOT match release v1" in output
    assert f"data/{single}.jsonl: line 1: {item}: its target" in output

    data.write_text(original, encoding="utf-8")
    _rewrite_first_doc(data, {"answer": first["candidates"][wrong]})
    code, output = _verify(released, out)
    assert code == 1 and f"data/{single}.jsonl: line 1: {item}: " in output

    data.write_text("".join(original.splitlines(keepends=True)[1:]), encoding="utf-8")
    code, output = _verify(released, out)
    assert code == 1 and "does NOT match release v1" in output
    assert f"missing from the score-mode tasks: {item}" in output

    data.write_text(original + original.splitlines(keepends=True)[0], encoding="utf-8")
    code, output = _verify(released, out)
    assert code == 1 and f"{item}: appears again (first at data/{single}.jsonl: line 1)" in output


@pytest.mark.parametrize(("export_format", "data"), [("hf", "test"), ("lm-eval", None)])
def test_an_edited_answer_text_does_not_match(
    released: Database, tmp_path: Path, export_format: str, data: str | None
) -> None:
    """`answer_text` is the key as people (and lm-eval's `doc_to_target`) read it."""
    out = _export(released, tmp_path / "out", "--format", export_format)
    if data is None:
        manifest = json.loads((out / "vetbench-export.json").read_text(encoding="utf-8"))
        data = next(task for task in manifest["tasks"] if "ordering" in task)
    path = out / "data" / f"{data}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    number, doc = next(
        (n, json.loads(line)) for n, line in enumerate(lines, 1) if "ordering" in line
    )
    doc["answer_text"] = doc["answer_text"][::-1]  # "D, A, C, B" read backwards
    lines[number - 1] = json.dumps(doc, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, output = _verify(released, out)
    assert code == 1 and "does NOT match release v1" in output
    assert f"data/{data}.jsonl: line {number}: {doc['id']}: its answer_text" in output


def test_a_score_mode_document_without_its_target_is_not_one_vetbench_wrote(
    released: Database, tmp_path: Path
) -> None:
    out = _export(released, tmp_path / "lm", "--format", "lm-eval")
    manifest = json.loads((out / "vetbench-export.json").read_text(encoding="utf-8"))
    single = next(task for task in manifest["score_tasks"] if "single" in task)
    data = out / "data" / f"{single}.jsonl"
    data.write_text(data.read_text(encoding="utf-8").replace('"target_index"', '"uarget_index"'))
    code, output = _verify(released, out)
    assert code == 1 and output.strip().endswith(
        f"data/{single}.jsonl: line 1: has no target_index field; not a record vetbench wrote"
    ), output


def test_a_mismatch_says_the_releases_hash_apart_from_the_one_found(
    released: Database, tmp_path: Path
) -> None:
    """`does NOT match release v1: 8 items, hash X` read as if release v1's hash were X,
    which `release show v1` contradicts: X is what the changed file hashes to.  The line
    now gives the release's own hash beside its name and says X is what was found."""
    stored = json.loads(ok(run_cli(released, "release", "show", "v1", "--json")).stdout)["hash"]
    out = _export(released, tmp_path / "v1.jsonl")
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[0] = lines[0].replace('"prompt":"', '"prompt":"X', 1)
    out.write_text("".join(lines), encoding="utf-8")
    found = json.loads(_verify(released, out, "--json")[1])["recomputed_hash"]
    code, output = _verify(released, out)
    assert code == 1 and found != stored
    verdict = output.splitlines()[-1]
    assert verdict == (
        f"{out} does NOT match release v1 (hash {stored[:12]}): its 8 items hash to {found}"
    )


def test_the_export_after_the_release_name_is_checked_as_with_export(
    released: Database, tmp_path: Path
) -> None:
    """`release verify v1 FILE` got click's "unexpected extra argument"; it checks FILE as
    `--export FILE` does.  A file given where the release name goes says how to check it."""
    out = _export(released, tmp_path / "v1.jsonl")
    given = run_cli(released, "release", "verify", "v1", str(out))
    assert given.exit_code == 0, given.output
    assert given.output == _verify(released, out, "v1")[1]
    assert f"{out} matches release v1" in given.output
    twice = run_cli(released, "release", "verify", "v1", str(out), "--export", str(out))
    assert twice.exit_code != 0 and "give the export once" in twice.output
    as_name = run_cli(released, "release", "verify", str(out))
    assert as_name.exit_code == 1
    assert as_name.output.strip().endswith(f"`vetbench release verify --export {out}`")
