"""`vetbench next`: claims and prints the item the review app would serve next, blind
(no key, no explanation), or says that nothing waits.  Real SQLite files and a real
PostgreSQL server."""

from __future__ import annotations

import json
import shlex

from click.testing import CliRunner
from helpers import EXPLANATION, run_cli, store_item, store_ordering_items, store_person
from sqlmodel import select

from db.engine import Database
from db.models import Claim, Person
from db.settings import set_setting
from db.vocabulary import Role
from reviewer.cli import cli
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.queue import annotator_queue


def next_json(database: Database, who: str, *options: str) -> dict:  # type: ignore[type-arg]
    result = run_cli(database, "next", "--as", who, "--json", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def claimed_by(database: Database, item_id: str) -> list[str]:
    with database.session() as session:
        rows = session.exec(
            select(Person.name)
            .join(Claim, Claim.person_id == Person.id)
            .where(Claim.item_id == item_id)
        ).all()
    return sorted(rows)


def test_next_claims_what_the_app_would_serve(database: Database) -> None:
    store_ordering_items(database, 12)
    for name in ("alice", "bob"):
        store_person(database, name)
    expected = annotator_queue(database, "alice").fetch_next()  # what the app shows alice
    assert expected is not None
    annotator_queue(database, "alice").release_claim(expected.id)
    shown = next_json(database, "alice")
    assert shown["annotator"] == "alice" and shown["filters"] == "all items"
    assert shown["item"]["item_id"] == expected.id
    assert shown["item"]["revision"] == expected.revision
    assert shown["item"]["choices"] == expected.choices
    assert set(shown["item"]) == {
        "item_id", "revision", "kind", "source", "language", "prompt", "choices"
    }  # fmt: skip
    assert claimed_by(database, expected.id) == ["alice"]
    assert next_json(database, "alice")["item"]["item_id"] == expected.id  # asked again
    assert next_json(database, "bob")["item"]["item_id"] != expected.id  # alice holds it


def test_next_never_shows_the_key_and_says_how_to_judge(database: Database) -> None:
    store_item(database, "econ:1", key="DABC")
    store_person(database, "alice")
    result = run_cli(database, "next", "--as", "alice")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("econ:1  ordering, revision 1, source test")
    assert "  A. " in result.output
    assert "DABC" not in result.output and "D, A, B, C" not in result.output
    assert EXPLANATION not in result.output
    # The line to copy names the database and the person as `next` was given them: pasted
    # with an answer, it stores alice's blind answer in this database and shows the key;
    # with a verdict too, it judges the item.
    line = result.output.splitlines()[-1]
    assert line.startswith("answer it blind (then the key is shown): vetbench --db ")
    assert line.endswith(' judge econ:1 --revision 1 --as alice --answer "…"')
    pasted = shlex.split(line.split(": ", 1)[1].replace('"…"', "DABC"))
    assert pasted[0] == "vetbench"
    judged = CliRunner().invoke(cli, [*pasted[1:], "--verdict", "keep"])
    assert judged.exit_code == 0, judged.output
    assert "saved judgment 1: alice on econ:1 revision 1" in judged.output


def test_judged_items_and_ones_own_revisions_are_never_served(database: Database) -> None:
    store_item(database, "econ:1")
    store_item(database, "econ:2")
    store_person(database, "alice")
    with database.transaction() as session:
        set_setting(session, "overlap", "1")
    first = next_json(database, "alice")["item"]["item_id"]
    submit_judgment(
        database, "alice", first, revision_number=1, blind_answer="DABC", verdict="keep"
    )
    other = "econ:2" if first == "econ:1" else "econ:1"
    edit_item(database, "alice", other, ItemEdit(note="clearer", prompt="Order these events."))
    nothing = run_cli(database, "next", "--as", "alice")
    assert nothing.exit_code == 0 and nothing.output == (
        "nothing waits for alice (all items)\n"
        "1 open item is yours (you imported, generated or edited it), which you cannot answer "
        "blind: other annotators judge it (vetbench users add NAME)\n"
    )
    assert next_json(database, "alice") == {
        "annotator": "alice", "filters": "all items", "item": None
    }  # fmt: skip


def test_next_takes_the_apps_filters_and_refuses_what_it_cannot_serve(
    database: Database,
) -> None:
    store_item(database, "econ:1")
    store_item(database, "mcq:1", kind="single", key="B")
    store_person(database, "alice")
    store_person(database, "lena", Role.LEAD)
    shown = next_json(database, "alice", "--kind", "single")
    assert shown["item"]["item_id"] == "mcq:1" and shown["filters"] == "kind single"
    unknown = run_cli(database, "next", "--as", "alice", "--source", "nowhere")
    assert unknown.exit_code == 1 and "no items come from source 'nowhere'" in unknown.output
    stranger = run_cli(database, "next", "--as", "mallory")
    assert stranger.exit_code == 1 and "mallory" in stranger.output


def test_a_filter_given_twice_is_refused_and_nothing_is_claimed(database: Database) -> None:
    """The queue's filters take one value: click kept the last of two alone, so
    `--kind ordering --kind single` claimed a single item without a word."""
    store_item(database, "econ:1")
    store_item(database, "mcq:1", kind="single", key="B")
    store_person(database, "alice")
    for option, first, second in (
        ("--kind", "ordering", "single"),
        ("--source", "econ", "mcq"),
        ("--status", "pending", "in_review"),
        ("--flag", "html", "duplicate"),
    ):
        twice = run_cli(database, "next", "--as", "alice", option, first, option, second)
        assert twice.exit_code == 2
        assert f"Invalid value for '{option}': given more than once ({first}, {second})" in (
            twice.output
        )
    assert claimed_by(database, "econ:1") == claimed_by(database, "mcq:1") == []
    same = next_json(database, "alice", "--kind", "single", "--kind", "single")
    assert same["item"]["item_id"] == "mcq:1" and same["filters"] == "kind single"


def test_next_serves_the_adaptive_queue(database: Database) -> None:
    """Under adaptive routing `next` serves what the adaptive queue serves: an item the
    consensus is unsure of comes first."""
    store_ordering_items(database, 6)
    for name in ("alice", "bob", "carol"):
        store_person(database, name)
    with database.transaction() as session:
        set_setting(session, "routing", "adaptive")
        set_setting(session, "target_confidence", "0.99")
    for who, answer, verdict in (("alice", "DABC", "keep"), ("bob", "ADBC", "wrong-key")):
        submit_judgment(
            database,
            who,
            "econ:004",
            revision_number=1,
            blind_answer=answer,
            verdict=verdict,
            corrected_key="ADBC" if verdict == "wrong-key" else None,
        )
    assert next_json(database, "carol")["item"]["item_id"] == "econ:004"
