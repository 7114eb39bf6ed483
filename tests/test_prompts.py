"""Prompts: the exact text of ordering and MCQ prompts, template overrides, shot selection,
shot files, stop sequences, and the answer-complete test used for early stopping."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import BUILTIN_TEMPLATES, FIXTURES, jsonl_record

from db.items import ItemSnapshot
from db.vocabulary import ItemKind
from evaluator import prompts
from evaluator.kinds import kind_spec


def item(
    item_id: str,
    kind: str = "ordering",
    *,
    key: str = "DACB",
    status: str = "approved",
    language: str = "en",
    choices: dict[str, str] | None = None,
    prompt: str | None = None,
    duplicate_of: str | None = None,
) -> ItemSnapshot:
    if choices is None:
        choices = (
            {label: f"event {label} of {item_id}" for label in "ABCD"}
            if kind == "ordering"
            else {"A": "one", "B": "two", "C": "three", "D": "four"}
        )
    return ItemSnapshot(
        id=item_id,
        kind=ItemKind(kind),
        source=item_id.split(":")[0],
        source_ref="",
        language=language,
        status=status,
        revision=1,
        prompt=prompt or f"Scenario of {item_id}.",
        choices=choices,
        key=key,
        explanation=None,
        suspected_duplicate_of=duplicate_of,
    )


def test_ordering_prompt_is_econlogicqa_style_with_shots_in_the_prefix() -> None:
    templates = prompts.load_templates()
    shots = [item("s:1", key="BADC"), item("s:2", key="CDAB")]
    prompt = prompts.build_prompt(item("e:1"), shots, templates)
    instructions = templates.instructions("ordering", "en")
    assert prompt.prefix == (
        f"{instructions}\n\n"
        "Question: Scenario of s:1.\n"
        "A. event A of s:1\nB. event B of s:1\nC. event C of s:1\nD. event D of s:1\n"
        "Answer: B, A, D, C\n\n"
        "Question: Scenario of s:2.\n"
        "A. event A of s:2\nB. event B of s:2\nC. event C of s:2\nD. event D of s:2\n"
        "Answer: C, D, A, B\n\n"
    )
    assert prompt.question == (
        "Question: Scenario of e:1.\n"
        "A. event A of e:1\nB. event B of e:1\nC. event C of e:1\nD. event D of e:1\n"
        "Answer:"
    )
    assert prompt.text == prompt.prefix + prompt.question


def test_the_prefix_is_shared_by_every_item_of_a_kind() -> None:
    templates = prompts.load_templates()
    shots = [item("s:1")]
    first = prompts.build_prompt(item("e:1"), shots, templates)
    second = prompts.build_prompt(
        item("e:2", choices={label: "x" for label in "ABCDE"}), shots, templates
    )
    assert first.prefix == second.prefix
    assert first.question != second.question
    assert "E. x" in second.question  # as many events as the item has


def test_zero_shots_leaves_only_the_instructions() -> None:
    templates = prompts.load_templates()
    prompt = prompts.build_prompt(item("e:1"), [], templates)
    assert prompt.prefix == templates.instructions("ordering", "en") + "\n\n"


def test_mcq_prompts_follow_cflue_in_chinese_for_chinese_items() -> None:
    templates = prompts.load_templates()
    single = item("c:1", "single", key="B", language="zh", prompt="我国A股实行（　）。")
    shot = item("c:2", "single", key="C", language="zh", prompt="下列说法正确的是（　）。")
    prompt = prompts.build_prompt(single, [shot], templates)
    assert prompt.prefix.startswith(templates.instructions("single", "zh"))
    assert "单项选择题" in prompt.prefix
    assert "题目：下列说法正确的是（　）。\nA. one\nB. two\nC. three\nD. four\n答案：C\n\n" in (
        prompt.prefix
    )
    assert prompt.question == "题目：我国A股实行（　）。\nA. one\nB. two\nC. three\nD. four\n答案："


# Words the instructions for each kind of question carry, in each language.
INSTRUCTION_PHRASES = {
    ("single", "en"): "Exactly one option is correct",
    ("multi", "en"): "One or more options are correct",
    ("truefalse", "en"): "true/false",
    ("single", "zh"): "单项选择题",
    ("multi", "zh"): "多项选择题",
    ("truefalse", "zh"): "判断题",
}


@pytest.mark.parametrize(("kind", "language"), INSTRUCTION_PHRASES)
def test_instructions_match_the_question_type_and_language(kind: str, language: str) -> None:
    key = "AB" if kind == "multi" else "A"
    choices = {"A": "对", "B": "错"} if kind == "truefalse" else None
    prompt = prompts.build_prompt(
        item("c:1", kind, key=key, language=language, choices=choices), [], prompts.load_templates()
    )
    assert INSTRUCTION_PHRASES[kind, language] in prompt.prefix
    cue = "答案：" if language == "zh" else "Answer:"
    assert prompt.question.endswith(cue)


def test_multi_answer_instructions_allow_a_single_correct_option() -> None:
    """They said "Two or more options are correct" (有两个或两个以上选项正确), but a multi-answer
    key may be one letter (118 of CFLUE's 1,171 multi-answer items): as CFLUE's own wording
    (可能存在多个正确的答案), they now claim no more than one correct option."""
    templates = prompts.load_templates()
    assert "One or more options are correct." in templates.instructions("multi", "en")
    assert "有一个或多个选项正确" in templates.instructions("multi", "zh")
    for language in ("en", "zh"):
        text = templates.instructions("multi", language)
        assert "Two or more" not in text and "两个或两个以上" not in text


def test_answers_are_written_as_the_shots_show_them() -> None:
    assert prompts.answer_text("ordering", "DACB") == "D, A, C, B"
    assert prompts.answer_text("single", "B") == "B"
    assert prompts.answer_text("multi", "ABD") == "ABD"
    assert prompts.answer_text("truefalse", "A") == "A"


def test_stop_sequences_end_at_a_blank_line_or_a_new_question() -> None:
    assert prompts.stop_sequences("ordering") == ("\n\n", "\nQuestion:")
    assert prompts.stop_sequences("single", prompts.load_templates(), "zh") == ("\n\n", "\n题目：")


def test_max_new_tokens_leaves_room_for_the_answer_only() -> None:
    ordering, single = kind_spec("ordering"), kind_spec("single")
    assert ordering.max_new_tokens(4) == 24
    assert ordering.max_new_tokens(5) > ordering.max_new_tokens(4)
    assert single.max_new_tokens(4) == 16


def test_prompt_hash_is_the_sha256_of_the_exact_text() -> None:
    assert prompts.prompt_hash("Answer:") == hashlib.sha256(b"Answer:").hexdigest()
    assert prompts.prompt_hash("Answer:") != prompts.prompt_hash("Answer: ")


def test_templates_can_be_overridden_one_file_at_a_time(tmp_path: Path) -> None:
    (tmp_path / "question.en.txt").write_text("Q: $question\n$options\nA:\n", encoding="utf-8")
    builtin = prompts.load_templates()
    custom = prompts.load_templates(tmp_path)
    prompt = prompts.build_prompt(item("e:1"), [item("s:1")], custom)
    assert prompt.question.startswith("Q: Scenario of e:1.\nA. event A")
    assert prompt.question.endswith("\nA:")
    assert "Q: Scenario of s:1." in prompt.prefix and "A: D, A, C, B" in prompt.prefix
    # Untouched files come from the built-in set.
    assert custom.text("option.txt") == builtin.text("option.txt")
    assert custom.hash != builtin.hash
    assert prompts.stop_sequences("ordering", custom) == ("\n\n", "\nQ:")


def test_a_copy_of_the_builtin_templates_changes_nothing(tmp_path: Path) -> None:
    shutil.copytree(BUILTIN_TEMPLATES, tmp_path / "t")
    assert prompts.load_templates(tmp_path / "t").hash == prompts.load_templates().hash


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("question.en.txt", "Q: $scenario\nAnswer:", "unknown placeholder $scenario"),
        ("option.txt", "$label costs $5", "lone '$'"),
        ("questions.en.txt", "x", "unknown template file"),
        # Before, a template leaving out the item was accepted: prompts without the question.
        (
            "question.en.txt",
            "Answer:",
            "question.en.txt: lacks $options, $question (a question template must use "
            "$options, $question)",
        ),
        ("option.txt", "$text", "option.txt: lacks $label"),
        ("shot.zh.txt", "$question_block", "shot.zh.txt: lacks $answer"),
    ],
)
def test_bad_templates_are_named(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(prompts.TemplateError, match=re.escape(message)) as raised:
        prompts.load_templates(tmp_path)
    assert str(tmp_path) in str(raised.value)


@pytest.mark.parametrize("held", [(), ("single.j2",), ("generate_question.txt",)])
def test_a_folder_without_templates_is_refused(tmp_path: Path, held: tuple[str, ...]) -> None:
    """Not one template in it: the run would record a folder and use the built-in wording."""
    for name in held:
        (tmp_path / name).write_text("x", encoding="utf-8")
    with pytest.raises(prompts.TemplateError) as raised:
        prompts.load_templates(tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{tmp_path}: no prompt template in this folder")
    assert "question.LANG.txt" in message and "instructions.KIND.LANG.txt" in message


def test_templates_say_which_files_came_from_the_folder(tmp_path: Path) -> None:
    (tmp_path / "question.en.txt").write_text("Q: $question\n$options\nA:", encoding="utf-8")
    (tmp_path / "instructions.single.zh.txt").write_text("选一个。", encoding="utf-8")
    custom = prompts.load_templates(tmp_path)
    assert custom.read_from_folder == ("question.en.txt", "instructions.single.zh.txt")
    official = custom.with_texts({"instructions.single.zh.txt": "官方"})
    assert official.read_from_folder == ("question.en.txt",)  # replaced: no longer in use
    assert prompts.load_templates().read_from_folder == ()


def test_missing_template_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(prompts.TemplateError, match="not a folder"):
        prompts.load_templates(tmp_path / "nowhere")


# ------------------------------------------------------------------- shots


def pool() -> list[ItemSnapshot]:
    approved = [item(f"a:{n}") for n in range(1, 9)]
    agreed = [item(f"g:{n}", status="agreed") for n in range(1, 4)]
    others = [
        item("p:1", status="pending"),
        item("r:1", status="rejected"),
        item("m:1", "single", key="B"),
    ]
    return approved + agreed + others


def test_shots_are_a_fixed_seeded_draw_from_approved_items_outside_the_set() -> None:
    evaluated = {"a:1", "a:2"}
    first = prompts.select_shots(pool(), "ordering", 5, exclude_ids=evaluated)
    again = prompts.select_shots(list(reversed(pool())), "ordering", 5, exclude_ids=evaluated)
    assert [s.id for s in first] == [s.id for s in again]  # independent of pool order
    assert len(first) == 5
    assert all(s.status == "approved" and s.id not in evaluated for s in first)
    assert all(s.kind is ItemKind.ORDERING for s in first)
    other_seed = [
        [
            s.id
            for s in prompts.select_shots(pool(), "ordering", 5, seed=seed, exclude_ids=evaluated)
        ]
        for seed in range(1, 6)
    ]
    assert any(ids != [s.id for s in first] for ids in other_seed)


def test_too_few_approved_items_fall_back_to_agreed_ones_and_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    evaluated = {f"a:{n}" for n in range(1, 8)}  # one approved ordering item left
    with caplog.at_level(logging.INFO, logger="evaluator.prompts"):
        shots = prompts.select_shots(pool(), "ordering", 3, exclude_ids=evaluated)
    assert [s.id for s in shots][0] == "a:8"
    assert {s.status for s in shots[1:]} == {"agreed"}
    assert "not approved" in caplog.text


def test_rejected_items_are_never_shots_and_shortfalls_are_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    evaluated = {s.id for s in pool() if s.status in ("approved", "agreed")}
    with caplog.at_level(logging.INFO, logger="evaluator.prompts"):
        shots = prompts.select_shots(pool(), "ordering", 5, exclude_ids=evaluated)
    assert [s.id for s in shots] == ["p:1"]
    assert "only 1 ordering item available" in caplog.text


def test_near_duplicates_of_evaluated_items_are_never_shots() -> None:
    items = [item("a:1"), item("a:2", duplicate_of="a:1"), item("a:3"), item("a:4")]
    items[0] = replace(items[0], suspected_duplicate_of="a:3")
    shots = prompts.select_shots(items, "ordering", 5, exclude_ids={"a:1"})
    assert [s.id for s in shots] == ["a:4"]


def test_same_language_shots_come_first() -> None:
    items = [item(f"e:{n}", "single", key="A") for n in range(3)] + [
        item(f"z:{n}", "single", key="A", language="zh") for n in range(3)
    ]
    shots = prompts.select_shots(items, "single", 2, language="zh")
    assert {s.language for s in shots} == {"zh"}


def test_no_shots_asked_for_none_given() -> None:
    assert prompts.select_shots(pool(), "ordering", 0) == []


def test_the_fixture_shot_file_loads() -> None:
    shots = prompts.load_shot_file(FIXTURES / "shots_ordering.jsonl")
    assert [s.key for s in shots] == ["DACB", "CBDA", "BDAC", "CADB", "ADBC"]
    assert all(s.kind is ItemKind.ORDERING and len(s.choices) == 4 for s in shots)
    assert shots[0].id == "shots_ordering.jsonl:1"


def test_bad_shot_files_name_the_line_and_field(tmp_path: Path) -> None:
    good = {
        "kind": "ordering",
        "prompt": "Put these in order.",
        "choices": {"A": "a", "B": "b"},
        "key": "B, A",
    }
    path = tmp_path / "shots.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({**good, "key": "A, C"}),
                json.dumps({**good, "choices": ["a", "b"]}),
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(prompts.ShotFileError) as raised:
        prompts.load_shot_file(path)
    problems = raised.value.problems
    assert [problem.split(": ")[0] for problem in problems] == [f"{path}:{n}" for n in (2, 3, 4)]
    assert problems[0].startswith(f"{path}:2: not valid JSON")
    assert problems[1].startswith(f"{path}:3: key") and problems[2].startswith(f"{path}:4: choices")
    # one line (the app shows it as a notice): the count and the first
    assert str(raised.value) == f"{path}: 3 problems in the shot file: {problems[0]} (and 2 more)"


def test_shot_file_problems_name_the_files_own_fields_and_lines(tmp_path: Path) -> None:
    """A shot file is JSONL: its problems say prompt (not question), an id given twice
    names both lines, one in two files both places, and bytes that are not UTF-8 their line."""
    shot = jsonl_record(id="s1")
    first = tmp_path / "first.jsonl"
    lines = [{**shot, "id": "s0", "prompt": ""}, shot, {**shot, "prompt": "q2"}]
    first.write_text("\n".join(map(json.dumps, lines)) + "\n", encoding="utf-8")
    with pytest.raises(prompts.ShotFileError) as raised:
        prompts.load_shot_file(first)
    assert list(raised.value.problems) == [
        f"{first}:1: prompt: is empty",
        f"{first}:3: id: s1 is also on line 2",
    ]
    first.write_text(json.dumps(shot) + "\n", encoding="utf-8")
    second = tmp_path / "second.jsonl"
    second.write_text("\n" + json.dumps({**shot, "prompt": "q3"}) + "\n", encoding="utf-8")
    with pytest.raises(prompts.ShotFileError) as raised:
        prompts.load_shot_files([first, second])
    assert str(raised.value) == f"{second} (line 2): shot id s1 is also in first.jsonl (line 1)"
    latin1 = tmp_path / "latin1.jsonl"
    café = json.dumps({**shot, "id": "s2", "prompt": "café"}, ensure_ascii=False)
    latin1.write_bytes(f"{json.dumps(shot)}\n{café}\n".encode("latin-1"))
    with pytest.raises(prompts.ShotFileError, match=f"^{latin1}:2: not valid UTF-8 text$"):
        prompts.load_shot_file(latin1)


def test_a_missing_shot_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(prompts.ShotFileError, match="no such shot file"):
        prompts.load_shot_file(tmp_path / "none.jsonl")


# ------------------------------------------------------ answer complete


def test_items_in_conflict_are_shots_only_when_nothing_else_is_left() -> None:
    candidates = [item("c:1", status="conflict"), item("p:1", status="pending")]
    assert [s.id for s in prompts.select_shots(candidates, "ordering", 1)] == ["p:1"]
    assert [s.id for s in prompts.select_shots(candidates, "ordering", 2)] == ["p:1", "c:1"]
