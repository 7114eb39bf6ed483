"""Item generation end to end: ``vetbench generate`` against a real OpenAI-compatible server
on 127.0.0.1, from the fixture articles and CFLUE questions, into a real database.

Covers: validated pending items that reach the review queue, rejects kept with reasons
and listed by ``vetbench rejects``, resume after interruption and after failures, a flaky
server that costs retries but no data, structured-output fallback, option shuffles with the
key remapped, template overrides, input errors, and that the API key is never stored."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from fake_openai_server import (
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    completion,
    malformed,
    rate_limited,
    response_format_rejected,
    server_error,
)
from helpers import write_folder
from sqlmodel import select

from db.engine import open_database
from db.formats.cflue import parse_choices
from db.items import get_revisions, iter_items
from db.models import AuditEvent, GenerationReject
from evaluator.generation.inputs import read_articles
from evaluator.generation.run import plan_from_articles, run_generation, split_done
from evaluator.generation.templates import GenerationMode, load_generation_template
from evaluator.openai_client import ChatClient
from evaluator.prompts import TemplateError, load_templates
from reviewer.cli import cli
from reviewer.queue import ReviewQueue

ROOT = Path(__file__).resolve().parent.parent
ARTICLES_CSV = ROOT / "fixtures" / "articles.csv"
ARTICLES_JSONL = ROOT / "fixtures" / "articles.jsonl"
CFLUE_FIXTURE = ROOT / "fixtures" / "cflue_mcq.json"
SECRET = "sk-generation-SECRET-9876543210"
KEY_ENV = "VETBENCH_GEN_TEST_KEY"
TITLE = re.compile(r"^Article title: (.+)$", re.MULTILINE)


def title_of(request: RecordedRequest) -> str:
    match = TITLE.search(request.user_text)
    return match.group(1).strip() if match else "?"


def ordering_answer(request: RecordedRequest, order: str = "D, A, C, B") -> Reply:
    """A good ordering item about the requested article, in the shape the request asked for."""
    title = title_of(request)
    events = {
        "A": f"Costs rise for {title}.",
        "B": "Customers react to the new prices.",
        "C": "The company raises its prices.",
        "D": "A supply shock hits the market.",
    }
    scenario = f"A firm faces a supply shock ({title}). What is the logical order of events?"
    if request.body and "response_format" in request.body:
        content = json.dumps(
            {
                "scenario": scenario,
                "events": events,
                "correct_order": order,
                "explanation": "The shock raises costs, so prices rise and customers react.",
            }
        )
    else:
        lines = [f"Scenario: {scenario}", *(f"{k}. {v}" for k, v in events.items())]
        lines += [f"Correct Order: {order}", "Explanation: Shock, costs, prices, reaction."]
        content = "\n".join(lines)
    return completion(content)


def mcq_answer(request: RecordedRequest) -> Reply:
    content = json.dumps(
        {
            "question": f"Which effect does a supply shock like '{title_of(request)}' have?",
            "choices": {
                "A": "Lower costs",
                "B": "Higher costs",
                "C": "No change",
                "D": "Deflation",
            },
            "answer": "B",
            "explanation": "A supply shock raises input costs.",
        }
    )
    return completion(content)


def rewrite_answer(request: RecordedRequest) -> Reply:
    original = request.user_text.split("):\n", 1)[1].split("\n\nIts options:", 1)[0]
    return completion(f"Question: （改写）{original}")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(default=ordering_answer) as running:
        yield running


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def generate(db_path: Path, server: FakeOpenAIServer, *args: str) -> Result:
    command = [
        "--db",
        str(db_path),
        "generate",
        *server.cli_options("fake-model", KEY_ENV),
        "--timeout",
        "2",
        "--max-wait",
        "0.01",
        *args,
    ]
    open_database(db_path).dispose()  # generate adds to a database; only init/import create one
    return CliRunner().invoke(cli, command, catch_exceptions=False)


def stored_items(db_path: Path, source: str | None = None) -> dict[str, Any]:
    db = open_database(db_path)
    try:
        with db.session() as session:
            return {
                item.id: item for item in iter_items(session, sources=[source] if source else None)
            }
    finally:
        db.dispose()


def test_ordering_items_from_the_fixture_articles_reach_the_review_queue(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 0, result.output
    assert "10 stored as pending, 0 invalid, 0 failed" in result.output

    items = stored_items(db_path)
    article_ids = [article.id for article in read_articles(ARTICLES_CSV)]
    assert sorted(items) == sorted(f"articles-ordering:{a}:0" for a in article_ids)
    item = items["articles-ordering:a01:0"]
    assert item.status == "pending" and item.kind == "ordering"
    assert item.key == "DACB" and list(item.choices) == ["A", "B", "C", "D"]
    assert "Harbor Roasters" in item.choices["A"]
    assert item.meta["article_id"] == "a01"

    db = open_database(db_path)
    with db.session() as session:
        (revision,) = get_revisions(session, "articles-ordering:a01:0")
        events = list(session.exec(select(AuditEvent).where(AuditEvent.action == "generate")))
    provenance = revision.provenance
    assert revision.change_note == "generated" and revision.author == "fake-model"
    assert provenance["model"] == "fake-model"
    assert provenance["base_url"] == server.base_url
    assert provenance["article_id"] == "a01" and provenance["sample_index"] == 0
    assert re.fullmatch(r"[0-9a-f]{64}", provenance["prompt_hash"])
    assert json.loads(provenance["raw_response"])["correct_order"] == "D, A, C, B"
    assert provenance["structured_output"] is True and provenance["generated_at"]
    assert len(events) == 10

    # The requests asked for the EconLogicQA shape, with a JSON schema.
    request = server.chat_requests("Harbor Roasters")[0]
    assert request.body is not None
    assert request.body["response_format"]["type"] == "json_schema"
    assert "logical order" in request.user_text and "the article" in request.user_text

    queue = ReviewQueue(db, "alice")
    shown = queue.next_item()
    assert shown is not None and shown.id in items
    db.dispose()


def test_plain_text_answers_are_parsed_when_the_server_refuses_structured_output(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    server.script(response_format_rejected())
    result = generate(
        db_path,
        server,
        "--articles",
        str(ARTICLES_JSONL),
        "--kind",
        "ordering",
        "--concurrency",
        "1",
    )
    assert result.exit_code == 0, result.output
    items = stored_items(db_path)
    assert len(items) == 10 and all(item.key == "DACB" for item in items.values())
    with_schema = [r for r in server.chat_requests() if r.body and "response_format" in r.body]
    assert len(with_schema) == 1  # the refused one; the rest went as plain text


def test_invalid_generations_are_rejected_with_reasons_and_listed(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    server.route("Harbor Roasters", ordering_answer_with_order("D, A, C, A"))
    server.route("Port slowdown", completion("I am sorry, I cannot write that question."))
    server.route(
        "Chip shortage",
        completion(
            "Scenario: As the article says, chips are short.\nA. a\nB. b\nC. c\nD. d\n"
            "Correct Order: B, A, D, C\nExplanation: x"
        ),
    )
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 0, result.output
    assert "7 stored as pending, 3 invalid" in result.output
    assert "vetbench rejects --source articles-ordering" in result.output
    assert len(stored_items(db_path)) == 7

    listing = CliRunner().invoke(cli, ["--db", str(db_path), "rejects"])
    assert listing.exit_code == 0, listing.output
    assert (
        "articles-ordering:a01:0  [fake-model]  key: 'D, A, C, A': event A appears more than once"
        in listing.output
    )
    assert "articles-ordering:a02:0" in listing.output and "response:" in listing.output
    assert (
        "articles-ordering:a04:0" in listing.output and "refers to 'the article'" in listing.output
    )
    assert "3 rejected generations" in listing.output

    as_json = CliRunner().invoke(
        cli, ["--db", str(db_path), "rejects", "--source", "articles-ordering", "--json"]
    )
    rows = json.loads(as_json.output)
    assert {row["id"] for row in rows} == {f"articles-ordering:a0{i}:0" for i in (1, 2, 4)}
    assert all(row["raw_response"] and row["prompt_hash"] for row in rows)
    none = CliRunner().invoke(cli, ["--db", str(db_path), "rejects", "--source", "other"])
    assert "no rejected generations for source other" in none.output

    # A re-run asks again for nothing: stored and rejected items are both done.
    before = len(server.chat_requests())
    again = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert again.exit_code == 0
    assert "all 10 items are already stored or rejected" in again.output
    assert len(server.chat_requests()) == before


def ordering_answer_with_order(order: str) -> Reply:
    return completion(
        "Scenario: A supply shock.\nA. Costs rise.\nB. Customers react.\nC. Prices rise.\n"
        f"D. The shock hits.\nCorrect Order: {order}\nExplanation: cause and effect."
    )


def test_a_flaky_server_costs_retries_not_data(server: FakeOpenAIServer, db_path: Path) -> None:
    attempts: dict[str, int] = {}

    def flaky(request: RecordedRequest) -> Reply:
        title = title_of(request)
        attempts[title] = attempts.get(title, 0) + 1
        script = [rate_limited(retry_after="0"), server_error(502), malformed()]
        if attempts[title] <= len(script):
            return script[attempts[title] - 1]
        return ordering_answer(request)

    server.default = flaky
    result = generate(
        db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering", "--json"
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["stored"] == 10 and summary["failed"] == 0 and summary["rejected"] == 0
    assert summary["retried"] == 30
    assert len(server.chat_requests()) == 40
    assert len(stored_items(db_path)) == 10


def test_failed_requests_are_retried_by_the_next_run(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    def down_for_two(request: RecordedRequest) -> Reply:
        if "Port slowdown" in request.user_text or "Chip shortage" in request.user_text:
            return server_error(503)
        return ordering_answer(request)

    server.default = down_for_two
    first = generate(
        db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering", "--max-retries", "1"
    )
    assert first.exit_code == 1
    assert "8 stored as pending, 0 invalid, 2 failed" in first.output
    assert "run the same command again to retry" in first.output
    assert "HTTP 503" in first.output
    assert SECRET not in first.output

    server.default = ordering_answer
    asked_before = {title_of(r) for r in server.chat_requests()}
    count_before = len(server.chat_requests())
    second = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert second.exit_code == 0, second.output
    assert "8 already done, 2 stored as pending" in second.output
    new_requests = server.chat_requests()[count_before:]
    assert len(new_requests) == 2 and len(asked_before) == 10
    assert len(stored_items(db_path)) == 10


def test_an_interrupted_run_keeps_its_items_and_the_next_one_finishes(
    server: FakeOpenAIServer, database: Any
) -> None:
    articles = read_articles(ARTICLES_CSV)
    template = load_generation_template(GenerationMode.ORDERING)
    tasks = plan_from_articles(
        articles, mode=GenerationMode.ORDERING, template=template, source="news"
    )
    client = ChatClient(
        "fake-model",
        base_url=server.base_url,
        api_key_env=KEY_ENV,
        timeout=2,
        concurrency=2,
        database=database,
    )

    def ctrl_c_after_three(summary: Any) -> None:
        if summary.stored == 3:
            raise KeyboardInterrupt

    stopping: list[bool] = []
    first = run_generation(
        database,
        client,
        tasks,
        actor="tester",
        on_progress=ctrl_c_after_three,
        on_stopping=lambda: stopping.append(True),
    )
    assert first.interrupted and stopping == [True]
    assert first.stored == 3
    with database.session() as session:
        assert len(list(iter_items(session, statuses=["pending"]))) == 3
    sent_in_first_run = len(server.chat_requests())
    assert sent_in_first_run < len(tasks)  # queued requests were dropped

    todo, skipped = split_done(database, tasks)
    assert skipped == 3
    second = run_generation(database, client, todo, actor="tester")
    assert second.stored == 7 and not second.interrupted
    # Answers to requests that were on the wire at Ctrl-C came from the cache:
    # every article was asked exactly once over both runs.
    assert len(server.chat_requests()) == len(tasks)
    assert second.cached == sent_in_first_run - 3
    client.close()


def test_ctrl_c_on_the_command_line_stops_cleanly(server: FakeOpenAIServer, db_path: Path) -> None:
    open_database(db_path).dispose()

    def slow_after_four(request: RecordedRequest) -> Reply:
        # From the fifth request on, each answer takes 2 s: Ctrl-C, sent once four were
        # seen, reaches the command long before the ten are done, however loaded the
        # machine (at 0.2 s each, a busy run once finished all ten first).
        delay = 0.2 if len(server.chat_requests()) <= 4 else 2.0
        return Reply(**{**ordering_answer(request).__dict__, "delay_s": delay})

    server.default = slow_after_four
    command = [
        sys.executable,
        "-c",
        "from reviewer.cli import main; main()",
        "--db",
        str(db_path),
        "generate",
        "--articles",
        str(ARTICLES_CSV),
        "--kind",
        "ordering",
        *server.cli_options("fake-model", KEY_ENV),
        "--concurrency",
        "1",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.wait_for_requests(4, timeout=60)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "stopping: waiting for requests already sent" in stderr
    assert "run the same command again to continue" in stderr
    stored = len(stored_items(db_path))
    assert 1 <= stored < 10
    assert f"{stored} stored as pending" in stdout

    server.default = ordering_answer
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 0, result.output
    assert len(stored_items(db_path)) == 10
    # The request on the wire at Ctrl-C finished into the cache: nothing was asked twice.
    assert len(server.chat_requests()) == 10


def test_mcq_items_from_articles(server: FakeOpenAIServer, db_path: Path) -> None:
    server.default = mcq_answer
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "mcq")
    assert result.exit_code == 0, result.output
    items = stored_items(db_path, "articles-mcq")
    assert len(items) == 10
    item = items["articles-mcq:a03:0"]
    assert item.kind == "single" and item.key == "B" and item.choices["B"] == "Higher costs"
    assert item.language == "en"


def test_rewritten_questions_have_shuffled_options_and_a_remapped_key(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    server.default = rewrite_answer
    result = generate(db_path, server, "--questions", str(CFLUE_FIXTURE), "--kind", "mcq")
    assert result.exit_code == 0, result.output
    records = json.loads(CFLUE_FIXTURE.read_text(encoding="utf-8"))
    items = stored_items(db_path, "cflue_mcq-rewrite")
    assert len(items) == len(records)
    moved = 0
    for index, record in enumerate(records, start=1):
        item = items[f"cflue_mcq-rewrite:{index}:0"]
        original = parse_choices(record["choices"])
        assert item.prompt.startswith("（改写）")
        assert sorted(item.choices.values()) == sorted(original.values())
        right_before = {original[letter] for letter in record["answer"]}
        right_after = {item.choices[letter] for letter in item.key}
        assert right_after == right_before  # the key follows its options
        if record["task"] == "判断题":
            assert item.choices == original
        else:
            moved += item.choices != original
        # The model saw the options in their new order and never the key.
        request = server.chat_requests(record["question"].strip())[0]
        shown = [line for line in request.user_text.splitlines() if re.match(r"[A-E]\. ", line)]
        assert shown == [f"{label}. {text}" for label, text in item.choices.items()]
    assert moved == sum(1 for r in records if r["task"] != "判断题")

    # The shuffle is the same on another run with the same seed.
    again = generate(
        db_path.with_name("again.db"), server, "--questions", str(CFLUE_FIXTURE), "--kind", "mcq"
    )
    assert again.exit_code == 0
    assert {i: v.choices for i, v in stored_items(db_path.with_name("again.db")).items()} == {
        i: v.choices for i, v in items.items()
    }


def test_identity_orders_are_relabelled_so_the_listing_does_not_give_the_answer(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    server.default = lambda request: ordering_answer(request, order="A, B, C, D")
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 0, result.output
    for item in stored_items(db_path).values():
        assert item.key != "ABCD"
        # The events in key order are still the logical sequence the model gave.
        assert item.choices[item.key[0]].startswith("Costs rise")
        assert item.choices[item.key[3]] == "A supply shock hits the market."


def test_five_events_are_rejected(server: FakeOpenAIServer, db_path: Path) -> None:
    server.default = lambda _request: completion(
        "Scenario: s\nA. a\nB. b\nC. c\nD. d\nE. e\nCorrect Order: E, D, C, B, A\nExplanation: x"
    )
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 0
    db = open_database(db_path)
    with db.session() as session:
        reasons = {row.reason for row in session.exec(select(GenerationReject))}
    db.dispose()
    assert reasons == {"events: asked for 4 events, got 5"}


def test_templates_can_be_overridden(
    server: FakeOpenAIServer, db_path: Path, tmp_path: Path
) -> None:
    house_style = "HOUSE STYLE for $$5 budgets.\nArticle title: $title\n\n$text\n"
    folder = write_folder(tmp_path, "templates", {"generate_ordering.txt": house_style})
    options = ("--articles", str(ARTICLES_CSV), "--kind", "ordering", "--templates", str(folder))
    result = generate(db_path, server, *options)
    assert result.exit_code == 0, result.output
    assert all(r.user_text.startswith("HOUSE STYLE for $5") for r in server.chat_requests())
    item = next(iter(stored_items(db_path).values()))
    db = open_database(db_path)
    with db.session() as session:
        provenance = get_revisions(session, item.id)[0].provenance
    db.dispose()
    assert provenance["template"] == str(folder / "generate_ordering.txt")
    # One folder can hold both kinds of template: `vetbench eval` ignores these files
    # (and refuses a folder holding none of its own).
    with pytest.raises(TemplateError, match="no prompt template in this folder"):
        load_templates(folder)
    (folder / "option.txt").write_text(load_templates().text("option.txt"), encoding="utf-8")
    assert load_templates(folder).texts == load_templates().texts

    (folder / "generate_ordering.txt").write_text("Use $article_text\n", encoding="utf-8")
    bad = generate(db_path, server, *options)
    assert bad.exit_code == 1
    assert "generate_ordering.txt: unknown placeholder $article_text" in bad.output


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("a.csv", "id,title\n1,x\n", "a.csv: line 1: the header needs columns title, text"),
        (
            "items.csv",
            'Question,A,B,Answer\nq,a,b,"A, B"\n',
            "missing title, text; these are EconLogicQA items, which `vetbench import` reads",
        ),
        ("b.csv", "title,text\nok,fine\nempty,\n", "b.csv: line 3: text: is empty"),
        ("c.jsonl", '{"title": "t", "text": "x"}\n{oops\n', "c.jsonl: line 2: malformed JSON"),
        ("d.jsonl", '{"title": "t"}\n', "d.jsonl: line 1: text: is missing"),
        ("e.csv", "", "e.csv: the file is empty"),
        (
            "f.jsonl",
            '{"id": 1, "title": "t", "text": "x"}\n{"id": 1, "title": "u", "text": "y"}\n',
            "f.jsonl: line 2: id '1' is used twice (first at",
        ),
    ],
)
def test_bad_article_files_are_reported_with_their_place(
    server: FakeOpenAIServer, db_path: Path, tmp_path: Path, name: str, content: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = generate(db_path, server, "--articles", str(path), "--kind", "ordering")
    assert result.exit_code == 1
    assert expected in result.output
    assert "Traceback" not in result.output
    assert server.chat_requests() == []


def test_articles_without_ids_use_row_numbers(
    server: FakeOpenAIServer, db_path: Path, tmp_path: Path
) -> None:
    path = tmp_path / "news.csv"
    path.write_text(
        "title,text\n"
        "Harbor Roasters raises espresso prices sharply after a Brazilian frost,First story.\n"
        "Dockworkers' go-slow at Bayside strands 400 toy containers offshore,Second story.\n",
        encoding="utf-8",
    )
    result = generate(db_path, server, "--articles", str(path), "--kind", "ordering", "--n", "2")
    assert result.exit_code == 0, result.output
    assert sorted(stored_items(db_path)) == [
        "news-ordering:1:0",
        "news-ordering:1:1",
        "news-ordering:2:0",
        "news-ordering:2:1",
    ]
    seeds = sorted((title_of(r), r.body["seed"]) for r in server.chat_requests() if r.body)
    assert [seed for _title, seed in seeds] == [0, 1, 0, 1]
    # This server ignores the seed, so each article's two samples are the same item:
    # the later one is flagged as a suspected duplicate of the earlier, as import does.
    assert "2 suspected near-duplicates flagged for review" in result.output
    items = stored_items(db_path)
    for article in ("1", "2"):
        first, second = items[f"news-ordering:{article}:0"], items[f"news-ordering:{article}:1"]
        flagged = [i for i in (first, second) if i.suspected_duplicate_of]
        assert len(flagged) == 1
        assert flagged[0].suspected_duplicate_of in (first.id, second.id)
        assert flagged[0].duplicate_similarity == 100.0


def test_the_api_key_is_never_stored_or_printed(server: FakeOpenAIServer, db_path: Path) -> None:
    server.route("Harbor Roasters", ordering_answer_with_order("D, D, C, B"))
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 0
    assert SECRET not in result.output
    assert SECRET not in server.everything_received()
    for path in db_path.parent.glob(db_path.name + "*"):
        assert SECRET.encode() not in path.read_bytes()


def test_a_bad_key_stops_the_run_with_a_clear_message(
    server: FakeOpenAIServer, db_path: Path
) -> None:
    server.default = lambda _request: Reply(401, {"error": {"message": "Incorrect API key"}})
    result = generate(db_path, server, "--articles", str(ARTICLES_CSV), "--kind", "ordering")
    assert result.exit_code == 1
    assert "stopped: HTTP 401: Incorrect API key" in result.output
    assert KEY_ENV in result.output and SECRET not in result.output
    assert len(server.chat_requests()) <= 1 + 2 * 4  # the queue was dropped


def test_generate_needs_exactly_one_input(server: FakeOpenAIServer, db_path: Path) -> None:
    neither = generate(db_path, server, "--kind", "ordering")
    assert (
        neither.exit_code == 1
        and "give either --articles FILE or --questions FILE" in neither.output
    )
    wrong = generate(db_path, server, "--questions", str(CFLUE_FIXTURE), "--kind", "ordering")
    assert wrong.exit_code == 1 and "use it with --kind mcq" in wrong.output


def test_a_long_article_in_csv_is_read_whole(tmp_path: Path) -> None:
    """Past the csv module's default field limit (131,072 characters) is still well-formed."""
    long_text = "Prices rose. " * 20_000  # 260,000 characters
    path = tmp_path / "long.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([["id", "title", "text"], ["a1", "Long", long_text]])
    [article] = read_articles(path)
    assert article.text == long_text.strip()
