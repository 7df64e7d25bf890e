"""Getting the RP2040 emulator without a Makefile (cribboard.virtual.rp2install): where it is
looked for, where --install-emulator puts it, and what a user reads when it is missing. The
install itself (npm ci from the lock file into an empty cache, then a Pico image booted) runs
from an installed wheel in tests/docs/test_wheel.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cribboard.virtual import rp2board, rp2install
from cribboard.virtual.cli import main as sim_main
from cribboard.virtual.rp2install import (
    EmulatorInstallError,
    cache_dir,
    emulator_dir,
    install_emulator,
    shipped_digest,
)


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the emulator's shipped files without node_modules, as a wheel has them, and
    an empty user cache."""
    copy = tmp_path / "rp2"
    shutil.copytree(rp2install.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("node_modules"))
    monkeypatch.setattr(rp2install, "PACKAGE_DIR", copy)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return copy


def test_the_cache_folder_is_named_by_the_shipped_files(shipped: Path, tmp_path: Path) -> None:
    first = cache_dir()
    assert first.parent == tmp_path / "cache" / "cribboard" / "rp2-emulator"
    assert first.name == shipped_digest()
    (shipped / "harness.js").write_text("// another version\n")
    assert cache_dir() != first  # a new package version never runs an old copy's harness


def test_nothing_installed_is_reported_as_missing(shipped: Path) -> None:
    assert emulator_dir() is None


def test_an_install_in_the_cache_is_found(shipped: Path) -> None:
    installed = cache_dir() / "node_modules" / "rp2040js"
    installed.mkdir(parents=True)
    (installed / "package.json").write_text("{}")
    assert emulator_dir() == cache_dir()


def test_without_npm_the_install_says_what_to_install_and_leaves_nothing(
    shipped: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(EmulatorInstallError, match="npm is not installed"):
        install_emulator(say=lambda line: None)
    assert not (tmp_path / "cache").exists()


def test_a_failed_npm_ci_is_one_line_and_leaves_no_half_made_copy(
    shipped: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An npm that fails as npm ci does when the registry is out of reach.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\necho 'npm error network request failed' >&2\nexit 1\n")
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(EmulatorInstallError, match="^npm ci failed: npm error network"):
        install_emulator(say=lambda line: None)
    assert list(cache_dir().parent.iterdir()) == []
    assert emulator_dir() is None


def test_sim_rp2_without_the_emulator_names_the_way_to_get_it(
    shipped: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert sim_main(["--rp2"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cribboard virtual: ")
    if shutil.which("node") or shutil.which("nodejs"):
        assert "the RP2040 emulator is not installed" in err
    assert "cribboard virtual --rp2 --install-emulator" in err
    assert rp2board.emulator_missing() is not None


def test_install_emulator_needs_rp2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        sim_main(["--install-emulator"])
    assert exit_info.value.code == 2
    assert "--install-emulator needs --rp2" in capsys.readouterr().err
