"""Triage narrowed and honest (issue 23): --search/--kind/--source/--exam/--flag filters, a
flawed or sensitive verdict on an earlier revision counts, a near-duplicate that asks the
opposite question or shares a stem suggests a look (never `--reason duplicate`), a non-lead
is told that a lead decides; and the read-only commands need no registered person."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cflue_record, run_cli, run_in_terminal, store_item, store_person, write_file

from db.engine import Database
from db.vocabulary import Role
from reviewer.judging import ItemEdit, edit_item, submit_judgment
from reviewer.queue import QueueFilter
from reviewer.triage import rank_items

CHOICES = "{'A': '公开市场操作', 'B': '消费者信用控制', 'C': '窗口指导', 'D': '道义劝告'}"
QUESTION = "根据中国人民银行的规定，下列各项中，属于一般性货币政策工具的是（）。"
SECURITIES = {"名称": "证券从业资格"}  # the other exam; cflue_record's is 银行从业资格
RECORDS = [
    cflue_record(question="两只基金在两种状态下的预期收益率如下表所示，期望收益率较高的是（）。",
                 choices="{'A': '基金甲', 'B': '基金乙', 'C': '一样高', 'D': '无法判断'}"),
    cflue_record(question=QUESTION, choices=CHOICES),
    # the opposite question over the same options (属于 / 不属于): not a copy
    cflue_record(task="多项选择题", answer="BCD", choices=CHOICES,
                 question=QUESTION.replace("属于", "不属于").replace("的是", "的有")),
    # a copy: options shuffled, key remapped
    cflue_record(**SECURITIES, answer="C", question=QUESTION,
                 choices="{'A': '窗口指导', 'B': '道义劝告', 'C': '公开市场操作', 'D': '消费者信用控制'}"),
    cflue_record(**SECURITIES,
                 question="某公司2020年净利润为500万元，如下图所示，其净资产收益率为（）。",
                 choices="{'A': '5%', 'B': '10%', 'C': '15%', 'D': '20%'}", answer="B"),
    # the same text with a key that disagrees: a copy (and a key to check)
    cflue_record(**SECURITIES, task="多项选择题", answer="AB", question=QUESTION, choices=CHOICES),
    # the same stem with other options: not certainly a copy
    cflue_record(**SECURITIES, question=QUESTION,
                 choices="{'A': '公开市场操作', 'B': '消费者信用控制', 'C': '窗口指导', 'D': '再贴现'}"),
]  # fmt: skip


@pytest.fixture
def exams(database: Database, tmp_path: Path) -> Database:
    """exam:1..7 imported from a CFLUE file (flags: needs-media on 1 and 5, duplicates on
    3, 4, 6 and 7 of exam:2), ordering items o:1 (source other); lena (lead), alice."""
    path = write_file(tmp_path, "exam.json", json.dumps(RECORDS, ensure_ascii=False))
    assert run_cli(database, "import", str(path)).exit_code == 0
    store_item(database, "o:1", key="DABC", source="other")
    store_person(database, "lena", Role.LEAD)
    store_person(database, "alice")
    return database


def ranked(database: Database, *args: str) -> list[str]:
    result = run_cli(database, "triage", "--json", *args)
    assert result.exit_code == 0, result.output
    return [entry["item_id"] for entry in json.loads(result.stdout)]


def test_filters_narrow_the_ranking(exams: Database) -> None:
    everything = ranked(exams)
    assert set(everything) == {"exam:1", "exam:3", "exam:4", "exam:5", "exam:6", "exam:7"}
    assert ranked(exams, "--exam", "证券从业资格") == ["exam:5", "exam:4", "exam:6", "exam:7"]
    assert ranked(exams, "--kind", "multi") == ["exam:3", "exam:6"]
    assert ranked(exams, "--flag", "needs-media") == ["exam:1", "exam:5"]
    assert ranked(exams, "--search", "净利润") == ["exam:5"]
    assert ranked(exams, "--search", "货币政策 不属于") == ["exam:3"]
    assert ranked(exams, "--source", "other") == []
    assert ranked(exams, "--source", "exam", "--flag", "duplicate", "--kind", "single") == [
        "exam:4",
        "exam:7",
    ]
    text = run_cli(exams, "triage", "--exam", "证券从业资格", "--flag", "html").stdout
    assert text == (
        "no suspicious items among exam 证券从业资格; flag html: no flags, no disagreeing "
        "models or annotators\n"
    )
    # the same filters in the review domain
    only = rank_items(exams, filters=QueueFilter(exams=("银行从业资格",), flags=("duplicate",)))
    assert [entry.item_id for entry in only] == ["exam:3"]


def test_a_duplicate_suggestion_follows_its_evidence(exams: Database) -> None:
    entries = {entry.item_id: entry for entry in rank_items(exams)}
    copy, opposite, stem = entries["exam:4"], entries["exam:3"], entries["exam:7"]
    keyed = entries["exam:6"]  # the same text, another key: a copy whose key disagrees
    assert keyed.suggestion is not None and keyed.suggestion.reason is not None
    assert keyed.suggestion.reason.value == "duplicate" and keyed.compare_with == ()
    assert "a different key: AB" in keyed.reasons[0].text
    assert copy.suggestion is not None and copy.suggestion.reason is not None
    assert copy.suggestion.reason.value == "duplicate" and copy.compare_with == ()
    assert opposite.suggestion is None and opposite.compare_with == ("exam:2",)
    assert opposite.reasons[0].text.startswith("duplicate: the opposite question of exam:2")
    assert "“不” in one question only" in opposite.reasons[0].text
    assert stem.suggestion is None and stem.compare_with == ("exam:2",)
    assert stem.reasons[0].text.startswith("duplicate: a shared stem with exam:2, not certainly")
    assert "choices differ" in stem.reasons[0].text
    text = run_cli(exams, "triage", "--as", "lena").stdout
    assert "→ vetbench decide exam:4 --status rejected --reason duplicate --as lena" in text
    assert "exam:3 --status" not in text and "exam:7 --status" not in text
    assert "→ worth a look beside exam:2; no decision suggested" in text
    # `flags show` says what triage says of each duplicate ("copies exam:2" beside "a shared
    # stem, not certainly a copy" about the one flag)
    for entry in (copy, opposite, stem, keyed):
        shown = run_cli(exams, "flags", "show", entry.item_id).stdout
        assert entry.reasons[0].text.removeprefix("duplicate: ") in shown, (entry.item_id, shown)


def test_on_a_terminal_each_reason_wraps_under_its_weight(
    exams: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns a reason ran to 168 (cut at 150 with "…"); piped, one line each."""
    from db.visible_text import east_asian_cell_len

    monkeypatch.setenv("COLUMNS", "60")
    status, shown = run_in_terminal(exams, "triage", "--as", "lena")
    lines = shown.replace("\r\n", "\n").splitlines()
    reasons = [line for line in lines if line.startswith(("       +", " " * 13))]
    assert status == 0 and max(east_asian_cell_len(line) for line in reasons) <= 60, shown
    piped = run_cli(exams, "triage", "--as", "lena").stdout
    [reason] = [line for line in piped.splitlines() if "a shared stem with exam:2" in line]
    start = next(i for i, line in enumerate(lines) if "a shared stem with exam:2" in line)
    joined = " ".join(line.strip() for line in lines[start : start + 4])
    assert reason.strip() in joined  # the whole reason, its lines under its weight
    assert lines[start + 1].startswith(" " * 13) and not lines[start + 1][13].isspace()


def test_a_non_lead_is_told_that_a_lead_decides(exams: Database) -> None:
    for who in ((), ("--as", "alice")):  # the unregistered login, and an annotator
        result = run_cli(exams, "triage", *who)
        assert result.exit_code == 0, result.output
        text = result.stdout
        assert "--as LEAD" not in text and "--as alice" not in text
        assert (
            "→ a lead decides: vetbench decide exam:1 --status rejected --reason flawed\n" in text
        )
        assert "Decisions are a lead's" in text
        assert text.endswith("(then F3 for the conflicts).\n")
    lead = run_cli(exams, "triage", "--as", "lena").stdout
    assert "a lead decides" not in lead and lead.endswith("--reason REASON --as lena\n")


def test_earlier_revisions_flawed_and_sensitive_verdicts_count(database: Database) -> None:
    store_person(database, "lena", Role.LEAD)
    for item_id in ("s:1", "f:1", "k:1"):
        store_item(database, item_id, key="DABC")
    submit_judgment(database, "alice", "s:1", revision_number=None, blind_answer="DABC",
                    verdict="sensitive", comment="names a real bank")  # fmt: skip
    submit_judgment(database, "alice", "f:1", revision_number=None, blind_answer="DABC",
                    verdict="flawed", comment="event C is vague")  # fmt: skip
    submit_judgment(database, "alice", "k:1", revision_number=None, blind_answer="DABC",
                    verdict="keep")  # fmt: skip
    for item_id in ("s:1", "f:1", "k:1"):  # a new revision: no judgments on it yet
        edit_item(database, "lena", item_id, ItemEdit(note="reworded", prompt=f"Order {item_id}."))
    entries = {entry.item_id: entry for entry in rank_items(database)}
    sensitive, flawed = entries["s:1"], entries["f:1"]
    earlier = [r for r in sensitive.reasons if r.text.startswith("earlier revisions")]
    assert [r.weight for r in earlier] == [1.5]
    assert [r.weight for r in flawed.reasons if r.text.startswith("earlier")] == [1.0]
    # a keep on an earlier revision is no sign (the three edits may flag each other as copies)
    assert not [r for r in entries.get("k:1", flawed).reasons if "verdict keep" in r.text]
    assert earlier[0].sign == "annotators"
    assert earlier[0].text == (
        "earlier revisions: alice verdict sensitive on revision 1 (“names a real bank”); "
        "was it mended?"
    )
    assert sensitive.suggestion is not None and sensitive.suggestion.reason is not None
    assert sensitive.suggestion.reason.value == "sensitive"
    # the edit may have mended it: a look, no rejection for it
    suggested = flawed.suggestion.reason if flawed.suggestion else None
    assert suggested is None or suggested.value != "flawed"
    # to anyone but a lead, how many: not whose, which verdict or what comment
    blind = {entry.item_id: entry for entry in rank_items(database, for_lead=False)}["s:1"]
    assert [r.text for r in blind.reasons if r.sign == "annotators"] == [
        "earlier revisions: 1 flawed or sensitive verdict (who and how: for leads); was it mended?"
    ]
    assert blind.score == sensitive.score and blind.suggestion is None


def test_the_real_cflue_opposite_pair_is_not_called_a_copy(
    cflue_knowledge: Path, database: Database
) -> None:
    """knowledge:2577 (纳税人应当进行土地增值税清算的有, 满2年) and knowledge:2087 (不属于…的
    是, 满3年): related, one gives the other away, but not copies."""
    assert run_cli(database, "import", str(cflue_knowledge)).exit_code == 0
    result = run_cli(database, "triage", "--search", "土地增值税 清算", "--flag", "duplicate")
    assert result.exit_code == 0, result.output
    assert "knowledge:2577" in result.stdout
    assert "the opposite question of knowledge:2087, not a copy" in result.stdout
    assert "knowledge:2577 --status rejected --reason duplicate" not in result.stdout
    [entry] = [e for e in rank_items(database) if e.item_id == "knowledge:2577"]
    assert entry.suggestion is None and entry.compare_with == ("knowledge:2087",)


def test_read_only_commands_need_no_registered_person(exams: Database) -> None:
    """The login running these tests is not among the database's people (lena, alice)."""
    for command in (
        ("conflicts",),
        ("agreement",),
        ("items",),
        ("stats",),
        ("triage",),
        ("runs",),
    ):
        result = run_cli(exams, *command)
        assert result.exit_code == 0, (command, result.output)
    conflicts = run_cli(exams, "conflicts").stdout
    assert "0 conflicts" in conflicts and "is not a lead" in conflicts
    # writing still asks who you are
    written = run_cli(exams, "judge", "o:1", "--answer", "DABC", "--verdict", "keep")
    assert written.exit_code == 1 and "is not a person" in written.output
