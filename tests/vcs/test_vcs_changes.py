"""The lines a change touched, read from git: exact lines, new files whole, never a write."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from git_repo import Repo
from gpuport.findings import Category, Confidence, Finding, Location, Severity
from gpuport.vcs import ChangedLines, ChangesError, changed_lines, parse_diff

BASE_TEXT = "".join(f"line {n}\n" for n in range(1, 11))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "project")
    repo.write("src/app.py", BASE_TEXT)
    repo.write("old.txt", "keep\ngone\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    return repo


def _finding(path: str, line: int, end_line: int = 0) -> Finding:
    return Finding(
        "GP201",
        "m",
        Location(path, line, 1, end_line),
        Severity.HIGH,
        Confidence.HIGH,
        Category.PYTHON,
    )


def test_changed_lines_are_the_new_sides_lines(repo: Repo) -> None:
    lines = BASE_TEXT.splitlines()
    lines[2] = "changed 3"
    lines.insert(6, "added after 6")
    repo.write("src/app.py", "\n".join(lines) + "\n")
    repo.write("old.txt", "keep\n")  # a deletion adds no line
    repo.commit()
    change = changed_lines(repo.root, "main")
    assert change.files == {"src/app.py": frozenset({3, 7})}
    assert change.merge_base == repo.git("rev-parse", "main").strip()


def test_new_committed_and_untracked_files_count_wholly(repo: Repo) -> None:
    repo.write("new.py", "import pynvml\n")
    repo.commit()
    repo.write("scratch.py", "x = 1\n")  # not committed, not ignored
    repo.write(".gitignore", "ignored.py\n")
    repo.write("ignored.py", "x = 1\n")
    change = changed_lines(repo.root, "main")
    assert change.files["new.py"] is None
    assert change.files["scratch.py"] is None
    assert "ignored.py" not in change.files
    assert change.covers(_finding("new.py", 1)) and change.covers(_finding("new.py", 0))


def test_uncommitted_edits_count(repo: Repo) -> None:
    repo.write("src/app.py", BASE_TEXT.replace("line 9\n", "line nine\n"))
    assert changed_lines(repo.root, "main").files == {"src/app.py": frozenset({9})}


def test_the_base_branchs_own_later_commits_are_not_the_change(repo: Repo) -> None:
    repo.write("src/app.py", BASE_TEXT.replace("line 2\n", "feature\n"))
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write("src/app.py", BASE_TEXT.replace("line 8\n", "main moved on\n"))
    repo.commit("main")
    repo.git("checkout", "-q", "feature")
    # against the merge base, not main's tip: line 8 is main's, not this branch's
    assert changed_lines(repo.root, "main").files == {"src/app.py": frozenset({2})}


def test_a_renamed_file_keeps_only_its_edited_lines(repo: Repo) -> None:
    repo.git("mv", "src/app.py", "src/main.py")
    repo.write("src/main.py", BASE_TEXT.replace("line 5\n", "five\n"))
    repo.commit()
    assert changed_lines(repo.root, "main").files == {"src/main.py": frozenset({5})}


def test_paths_are_relative_to_the_scanned_folder_or_file(repo: Repo) -> None:
    repo.write("src/app.py", BASE_TEXT.replace("line 4\n", "four\n"))
    repo.write("old.txt", "keep\nchanged\n")
    repo.commit()
    assert changed_lines(repo.root / "src", "main").files == {"app.py": frozenset({4})}
    assert changed_lines(repo.root / "src" / "app.py", "main").files == {"app.py": frozenset({4})}


def test_covers_a_findings_span_and_leaves_out_whole_file_findings_of_old_files() -> None:
    change = ChangedLines("main", "0" * 40, {"a.py": frozenset({5}), "b.py": None})
    assert change.covers(_finding("a.py", 5))
    assert change.covers(_finding("a.py", 3, end_line=6))
    assert not change.covers(_finding("a.py", 4))
    assert not change.covers(_finding("a.py", 0))  # was there before the change
    assert not change.covers(_finding("c.py", 5))
    assert change.covers(_finding("b.py", 0))


def test_git_quoted_names_are_read_back() -> None:
    diff = (
        b'diff --git "a/tab\\there.py" "b/tab\\there.py"\n'
        b'+++ "b/tab\\there.py"\n'
        b"@@ -1 +1,2 @@\n"
        b"diff --git a/caf\xc3\xa9.py b/caf\xc3\xa9.py\n"
        b"new file mode 100644\n"
        b"--- /dev/null\n"
        b"+++ b/caf\xc3\xa9.py\n"
        b"@@ -0,0 +1,3 @@\n"
        b'diff --git "a/\\303\\251t\\303\\251.py" "b/\\303\\251t\\303\\251.py"\n'
        b'+++ "b/\\303\\251t\\303\\251.py"\n'
        b"@@ -3,0 +4 @@\n"
        b"diff --git a/gone.py b/gone.py\n"
        b"deleted file mode 100644\n"
        b"+++ /dev/null\n"
        b"@@ -1,2 +0,0 @@\n"
    )
    assert parse_diff(diff) == {
        "tab\there.py": frozenset({1, 2}),
        "café.py": None,
        "été.py": frozenset({4}),
    }


def test_an_odd_file_name_in_a_real_repository(repo: Repo) -> None:
    repo.write('we"ird\tname.py', "x = 1\n")
    repo.commit()
    assert changed_lines(repo.root, "main").files == {'we"ird\tname.py': None}


def test_unknown_ref_is_a_clear_error(repo: Repo) -> None:
    with pytest.raises(ChangesError, match="unknown git ref 'no-such-branch'"):
        changed_lines(repo.root, "no-such-branch")


def test_a_ref_that_looks_like_an_option_is_refused(repo: Repo) -> None:
    with pytest.raises(ChangesError, match="not a git ref"):
        changed_lines(repo.root, "--output=/tmp/x")


def test_a_folder_outside_any_repository_is_a_clear_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    ceiling = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    with pytest.MonkeyPatch.context() as mp:
        for key, value in ceiling.items():
            mp.setenv(key, value)
        with pytest.raises(ChangesError, match="not inside a git work tree"):
            changed_lines(plain, "main")


def test_missing_git_is_a_clear_error(repo: Repo) -> None:
    with pytest.raises(ChangesError, match="git not found"):
        changed_lines(repo.root, "main", git="/nonexistent/git")


def test_a_slow_git_is_stopped(repo: Repo, tmp_path: Path) -> None:
    slow = tmp_path / "slow-git"
    slow.write_text("#!/bin/sh\nsleep 5\n", encoding="utf-8")
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(ChangesError, match=r"took longer than 0\.2 s"):
        changed_lines(repo.root, "main", git=str(slow), timeout=0.2)


def _tree_state(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for folder, _dirs, files in os.walk(root / ".git"):
        for name in files:
            st = os.stat(os.path.join(folder, name))
            out[os.path.join(folder, name)] = (st.st_size, st.st_mtime_ns)
    return out


def test_the_repository_is_never_written(repo: Repo) -> None:
    repo.write("src/app.py", BASE_TEXT.replace("line 1\n", "one\n"))
    # A file whose stat no longer matches the index: a plain `git diff` would refresh the index.
    repo.write("old.txt", "keep\ngone\n")
    os.utime(repo.root / "old.txt", ns=(1, 1))
    before = _tree_state(repo.root)
    changed_lines(repo.root, "main")
    assert _tree_state(repo.root) == before
