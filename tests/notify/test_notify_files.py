"""lidguard-notify's files on disk: the database folder and files (issue 39 item 10).

``serve`` opens the database through ``Store``; a DatabasePath inside a shared 1777 folder must leave
that folder alone, while the database and its -wal/-shm files are 0600 and the folders lidguard
creates itself are 0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from lidguard.notify.config import init_config
from lidguard.notify.store import Store


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def shared_folder(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)  # like /tmp
    old_umask = os.umask(0o022)
    try:
        yield folder
    finally:
        os.umask(old_umask)


def test_a_database_in_a_shared_sticky_folder_leaves_the_folder_alone_and_is_0600(shared_folder: Path) -> None:
    store = Store(shared_folder / "notifications.sqlite")
    try:
        store.upsert_subscription("https://push.example.org/x", "p", "a")  # WAL traffic: -wal and -shm exist
        assert mode(shared_folder) == 0o1777
        files = sorted(path.name for path in shared_folder.iterdir())
        assert files == ["notifications.sqlite", "notifications.sqlite-shm", "notifications.sqlite-wal"]
        for name in files:
            assert mode(shared_folder / name) == 0o600, name
    finally:
        store.close()


def test_serve_check_keeps_a_shared_folder_and_secures_an_old_0644_database(shared_folder: Path,
                                                                             tmp_path: Path) -> None:
    database = shared_folder / "old.sqlite"
    Store(database).close()
    os.chmod(database, 0o644)  # written by an older version
    config = init_config(tmp_path / "notify.json", "http://127.0.0.1:9", database_path=str(database))
    from lidguard.notify.cli import _check_database

    _check_database(config)
    assert mode(shared_folder) == 0o1777
    assert mode(database) == 0o600


def test_folders_lidguard_creates_are_0700_and_existing_parents_keep_their_mode(shared_folder: Path) -> None:
    database = shared_folder / "made" / "by" / "lidguard" / "n.sqlite"
    Store(database).close()
    assert mode(shared_folder) == 0o1777
    for folder in (shared_folder / "made", shared_folder / "made" / "by", database.parent):
        assert mode(folder) == 0o700, folder
    assert mode(database) == 0o600


def test_a_symlink_at_the_database_path_is_refused_and_its_target_untouched(shared_folder: Path,
                                                                          tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.sqlite"
    target.write_bytes(b"")
    os.chmod(target, 0o644)
    (shared_folder / "n.sqlite").symlink_to(target)
    config = init_config(tmp_path / "notify.json", "http://127.0.0.1:9",
                         database_path=str(shared_folder / "n.sqlite"))
    from lidguard.notify.cli import UsageError, _check_database

    with pytest.raises(UsageError, match="cannot open the database"):
        _check_database(config)
    assert mode(target) == 0o644 and config.database_path.is_symlink()
