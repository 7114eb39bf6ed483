"""RunParams: the typed ``EvalRun.params`` reads every run stored so far and writes it back."""

from __future__ import annotations

import json

from db.json_types import JsonObject
from db.vocabulary import EvalProtocol
from evaluator.run_params import KindShots, Repeat, RunParams, RunSession, ShotFileRef, ShotRef

# What a run made before protocols, extractors, budgets, permutation and repeats were
# recorded stored (a transformers backend's settings first, its session last).
BEFORE_PROTOCOLS: JsonObject = {
    "device": "cpu",
    "dtype": "float32",
    "batch_size": "auto",
    "seed": 1234,
    "template_hash": "abc",
    "templates_dir": None,
    "shot_file": None,
    "shot_file_sha256": None,
    "shots_used": {"ordering/en": [{"id": "econ:7", "revision": 2}]},
    "shot_notes": ["ordering/en: only 1 of 5 shots available outside the evaluated set"],
    "revisions": {"econ:1": 1, "econ:2": 3},
    "excluded": {},
    "pid": 4242,
    "session_started_at": "2026-11-30T10:00:00",
    "session_done_before": 0,
    "session_device": "cpu",
}

# What a run stores today (a series' second repeat, options permuted).
TODAY: JsonObject = {
    "base_url": "http://127.0.0.1:9/v1",
    "temperature": 0.0,
    "seed": 1235,
    "template_hash": "def",
    "templates_dir": "/tmp/templates",
    "shot_file": "/tmp/shots.jsonl",
    "shot_file_sha256": "0" * 64,
    "shots_used": {"single/zh": [], "ordering/en": [{"id": "econ:9", "revision": 1}]},
    "shot_notes": [],
    "revisions": {"cflue:1": 1},
    "excluded": {"cflue:9": "too many candidate answers for score mode (multi)"},
    "protocol": "cflue",
    "layout": "cflue",
    "extractors": ["cflue", "lenient"],
    "shots_by_kind": {"single": 0},
    "max_new_tokens": 256,
    "permute_options": True,
    "repeat": {"series": "a1b2c3d4e5f6", "index": 1, "of": 3},
    "templates_read": ["question.zh.txt"],  # written when a folder gave some templates
    "pid": 99,
    "session_started_at": "2026-12-01T09:00:00+00:00",
    "session_done_before": 4,
    "session_device": None,
}


def test_todays_params_round_trip_key_for_key() -> None:
    params = RunParams.from_json(TODAY)
    assert params.protocol is EvalProtocol.CFLUE
    assert params.extractors == ("cflue", "lenient")
    assert params.repeat == Repeat("a1b2c3d4e5f6", 1, 3)
    assert params.shots_used["ordering/en"] == (ShotRef("econ:9", 1),)
    assert params.backend == {"base_url": "http://127.0.0.1:9/v1", "temperature": 0.0}
    assert params.session == RunSession(99, "2026-12-01T09:00:00+00:00", 4, None)
    written = params.to_json()
    assert json.dumps(written) == json.dumps(TODAY)  # the same keys in the same order


def test_a_run_from_before_protocols_reads_as_a_custom_run_with_the_lenient_reader() -> None:
    params = RunParams.from_json(BEFORE_PROTOCOLS)
    assert params.protocol is EvalProtocol.CUSTOM
    assert params.layout == "vetbench" and params.extractors == ("lenient",)
    assert params.max_new_tokens is None and params.permute_options is False
    assert params.repeat is None and params.shots_by_kind == {}
    assert params.revisions == {"econ:1": 1, "econ:2": 3}
    assert params.backend == {"device": "cpu", "dtype": "float32", "batch_size": "auto"}
    assert params.session is not None and params.session.pid == 4242
    # Written back, every recorded value is kept; the settings it lacked say their defaults.
    written = params.to_json()
    assert {k: written[k] for k in BEFORE_PROTOCOLS} == BEFORE_PROTOCOLS
    assert written["protocol"] == "custom" and written["extractors"] == ["lenient"]


def test_without_revisions_and_without_a_session() -> None:
    params = RunParams.from_json({"seed": 7, "revisions": {"a": 1}})
    assert params.session is None and params.seed == 7
    shown = params.to_json(with_revisions=False)
    assert "revisions" not in shown and "pid" not in shown


def test_malformed_values_read_as_absent() -> None:
    params = RunParams.from_json(
        {
            "protocol": "no-such-protocol",
            "extractors": "cflue",
            "max_new_tokens": 0,
            "repeat": {"series": "x"},
            "revisions": {"a": "one"},
            "shots_by_kind": {"single": "5"},
            "permute_options": "yes",
        }
    )
    assert params.protocol is EvalProtocol.CUSTOM and params.extractors == ("lenient",)
    assert params.max_new_tokens is None and params.repeat is None
    assert params.revisions == {} and params.shots_by_kind == {}
    assert params.permute_options is False


def test_a_shot_source_and_more_shot_files_round_trip_and_older_runs_lack_them() -> None:
    stored: JsonObject = {
        **TODAY,
        "shots_from": "pending",
        "more_shot_files": [{"path": "/tmp/shots_single.jsonl", "sha256": "1" * 64}],
    }
    params = RunParams.from_json(stored)
    assert params.shots_from == "pending"
    assert params.more_shot_files == (ShotFileRef("/tmp/shots_single.jsonl", "1" * 64),)
    written = params.to_json()
    assert written == stored and list(written)[-4:] == ["pid", *list(TODAY)[-3:]]  # session last
    older = RunParams.from_json(TODAY)
    assert older.shots_from is None and older.more_shot_files == ()
    assert "shots_from" not in older.to_json() and "more_shot_files" not in older.to_json()


def test_the_shots_each_kind_got_are_read_from_the_recorded_shots() -> None:
    # TODAY: single asked 0 and got 0; ordering asked the run's 5 and got 1.
    counts = RunParams.from_json(TODAY).shot_counts(5)
    assert counts.kinds == (KindShots("ordering", 5, (1,)), KindShots("single", 0, (0,)))
    assert counts.short and not counts.plain and counts.used_text == "0–1"
    assert counts.label() == "ordering 1-shot (5 asked), single 0-shot"
    # orders of two sizes got different numbers: the label gives the range
    sizes = RunParams.from_json(
        {
            "shots_used": {
                "ordering/en/4": [{"id": f"s{n}", "revision": 1} for n in range(5)],
                "ordering/en/5": [{"id": "t", "revision": 1}],
            }
        }
    )
    assert sizes.shot_counts(5).label() == "ordering 1–5-shot (5 asked)"
    # every kind got what the run asked for: the plain label
    full = RunParams.from_json({"shots_used": {"single/zh": [{"id": "a", "revision": 1}]}})
    assert full.shot_counts(1).plain and full.shot_counts(1).label() == "1-shot"
    # a run from before shots were recorded reads as asked
    assert RunParams.from_json({}).shot_counts(5).label() == "5-shot"
    assert RunParams.stored_shot_counts(TODAY, 5) == counts
