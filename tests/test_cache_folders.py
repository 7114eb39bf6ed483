"""A cache folder is built once, completely or not at all (evaluator.cache_folders)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.cache_folders import build_once, is_built


def test_a_folder_is_built_once_and_a_marked_copy_is_reused(tmp_path: Path) -> None:
    builds: list[Path] = []

    def build(staging: Path) -> None:
        builds.append(staging)
        (staging / "weights.bin").write_bytes(b"w")

    target = tmp_path / "cache" / "model-1"
    options = {"locks": tmp_path / "cache" / "locks", "marker": "done.txt", "marker_text": "ok"}
    assert build_once(target, build, **options) == target
    assert build_once(target, build, **options) == target
    assert len(builds) == 1 and builds[0] != target  # built beside it, then renamed
    assert (target / "weights.bin").read_bytes() == b"w" and is_built(target, "done.txt")
    assert sorted(path.name for path in target.parent.iterdir()) == ["locks", "model-1"]


def test_a_copy_without_its_marker_is_built_again(tmp_path: Path) -> None:
    """What a crash of an older build left: files, but no marker."""
    target = tmp_path / "model-1"
    target.mkdir()
    (target / "half.bin").write_bytes(b"half")

    def build(staging: Path) -> None:
        (staging / "whole.bin").write_bytes(b"whole")

    build_once(target, build, locks=tmp_path / "locks", marker="done.txt", marker_text="ok")
    assert sorted(path.name for path in target.iterdir()) == ["done.txt", "whole.bin"]


def test_a_failed_build_leaves_nothing_and_the_error_reaches_the_caller(tmp_path: Path) -> None:
    def failing(staging: Path) -> None:
        (staging / "part.bin").write_bytes(b"part")
        raise OSError(28, "No space left on device")

    target = tmp_path / "cache" / "model-1"
    with pytest.raises(OSError, match="No space left"):
        build_once(target, failing, locks=tmp_path / "locks", marker="done.txt", marker_text="")
    assert list(target.parent.iterdir()) == []  # neither the folder nor its staging copy
