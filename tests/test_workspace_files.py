"""Listing a workspace's files: git's ignore rules, read without running anything the workspace chose.

Real git is the oracle for which files are ignored (run here, in a repository the test made safe);
the listing itself must never start git, since git runs `core.fsmonitor` from the repository's config.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from graphmend.files import discover_workspace

LAYOUT = {
    ".gitignore": "generated/\n*_pb2.py\n!keep_pb2.py\n/top_only.py\n",
    ".git/info/exclude": "scratch_*.py\n",
    "model.py": "",
    "top_only.py": "",
    "keep_pb2.py": "",
    "msg_pb2.py": "",
    "scratch_1.py": "",
    "generated/out.py": "",
    "pkg/__init__.py": "",
    "pkg/top_only.py": "",  # "/top_only.py" is anchored to the root's folder
    "pkg/.gitignore": "local.py\n!../model.py\nsub/*\n!sub/wanted.py\n",
    "pkg/local.py": "",
    "pkg/sub/wanted.py": "",
    "pkg/sub/unwanted.py": "",
    "pkg/deep/local.py": "",  # pkg/.gitignore's "local.py" has no slash: it matches at any depth
    "other/local.py": "",
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    _git(root, "init", "-q")
    for name, text in LAYOUT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _listed(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in discover_workspace(folder))


def _git_listed(folder: Path) -> list[str]:
    out = _git(folder, "ls-files", "--cached", "--others", "--exclude-standard", "--", "*.py")
    return sorted(line for line in out.splitlines() if line)


def test_ignored_files_are_the_ones_git_ignores(repository: Path) -> None:
    listed = _listed(repository)
    assert listed == _git_listed(repository)
    assert "model.py" in listed and "pkg/top_only.py" in listed and "keep_pb2.py" in listed
    assert "msg_pb2.py" not in listed and "generated/out.py" not in listed and "pkg/deep/local.py" not in listed


def test_a_folder_inside_a_repository_obeys_the_ignore_files_above_it(repository: Path) -> None:
    assert _listed(repository / "pkg") == _git_listed(repository / "pkg") == ["__init__.py", "sub/wanted.py", "top_only.py"]


def test_listing_a_workspace_runs_no_program_its_git_config_names(repository: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    _git(repository, "config", "core.fsmonitor", f"touch {marker}; echo")
    listed = _listed(repository)
    assert not marker.exists()
    assert "model.py" in listed and "msg_pb2.py" not in listed


def test_outside_a_repository_every_python_file_is_listed(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("a.py\n", encoding="utf-8")  # not a work tree: no git rules
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("", encoding="utf-8")
    assert _listed(tmp_path) == ["a.py", "sub/b.py"]
