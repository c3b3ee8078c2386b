"""SQLite storage of the notification server (stdlib ``sqlite3``; every call is synchronous and quick,
the app runs them in a worker thread through ``anyio.to_thread``).

One connection guarded by a lock, WAL, ``synchronous=FULL`` so a 202 means the event is on disk.
Migrations are numbered scripts applied in order from an empty database (``PRAGMA user_version``).
Times are stored as UTC ISO text with ``Z``.

The database and its -wal/-shm/-journal files are 0600 (SQLite gives the side files the database
file's mode); the folders of ``DatabasePath`` that do not exist yet are created 0700, folders that
exist keep their mode (a shared 1777 folder stays shared). A symlink or a non-regular file at the
path is refused.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import stat
import threading
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["EXTEND_CAP_SECONDS", "FINAL_STATUSES", "Store", "iso", "parse_iso", "utc_now"]

EXTEND_CAP_SECONDS = 300
FINAL_STATUSES = frozenset({"Replied", "Canceled", "Expired"})

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE Subscriptions (
        Id INTEGER PRIMARY KEY, Endpoint TEXT NOT NULL UNIQUE, P256dh TEXT NOT NULL, Auth TEXT NOT NULL,
        CreatedAtUtc TEXT NOT NULL, UpdatedAtUtc TEXT NOT NULL, LastSeenAtUtc TEXT,
        IsActive INTEGER NOT NULL DEFAULT 1, DeactivatedAtUtc TEXT, FailureCount INTEGER NOT NULL DEFAULT 0,
        LastFailureAtUtc TEXT);
    CREATE INDEX IX_Subscriptions_IsActive ON Subscriptions(IsActive);
    CREATE TABLE WebhookEvents (
        Id INTEGER PRIMARY KEY, EventType TEXT NOT NULL, Reason TEXT, Provider TEXT, ProviderName TEXT,
        SessionIdentifier TEXT, WorkingDirectory TEXT, FollowUpId TEXT, PayloadJson TEXT NOT NULL,
        ReceivedAtUtc TEXT NOT NULL, ClaimedAtUtc TEXT, ProcessedAtUtc TEXT,
        Status TEXT NOT NULL DEFAULT 'Pending', AttemptCount INTEGER NOT NULL DEFAULT 0, LastError TEXT);
    CREATE INDEX IX_WebhookEvents_Status_Id ON WebhookEvents(Status, Id);
    CREATE TABLE NotificationDeliveries (
        Id INTEGER PRIMARY KEY,
        WebhookEventId INTEGER NOT NULL REFERENCES WebhookEvents(Id) ON DELETE CASCADE,
        SubscriptionId INTEGER NOT NULL REFERENCES Subscriptions(Id) ON DELETE CASCADE,
        Status TEXT NOT NULL, HttpStatusCode INTEGER, Error TEXT, CreatedAtUtc TEXT NOT NULL);
    CREATE INDEX IX_NotificationDeliveries_WebhookEventId ON NotificationDeliveries(WebhookEventId);
    CREATE TABLE FollowUps (
        Id TEXT PRIMARY KEY, WebhookEventId INTEGER REFERENCES WebhookEvents(Id) ON DELETE SET NULL,
        PollToken TEXT NOT NULL, Status TEXT NOT NULL DEFAULT 'Pending', Provider TEXT, ProviderName TEXT,
        SessionIdentifier TEXT, WorkingDirectory TEXT, InputPromptPreview TEXT, LastAssistantMessage TEXT,
        CreatedAtUtc TEXT NOT NULL, InitialExpiresAtUtc TEXT NOT NULL, ExpiresAtUtc TEXT NOT NULL,
        Reply TEXT, FinishedAtUtc TEXT);
    """,
    # The language of the browser that subscribed (its Accept-Language; NULL: the server's language).
    """
    ALTER TABLE Subscriptions ADD COLUMN Culture TEXT;
    """,
)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
SIDE_FILE_SUFFIXES = ("-wal", "-shm", "-journal")


def make_missing_folders(folder: Path) -> None:
    """Creates the folders of ``folder`` that are missing, each 0700; never changes one that exists."""
    missing = []
    while not folder.is_dir() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for item in reversed(missing):
        try:
            item.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by someone else: not ours to change
            continue
        os.chmod(item, 0o700)  # mkdir's mode went through the umask


def _secure_file(path: str, *, create: bool) -> None:
    """``path`` (a regular file, never through a symlink) as 0600; created 0600 when ``create``."""
    flags = os.O_RDWR | _NOFOLLOW | _NONBLOCK | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        if create:
            raise
        return
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        if stat.S_IMODE(info.st_mode) != 0o600:
            fchmod = getattr(os, "fchmod", None)  # missing on Windows before 3.13
            fchmod(fd, 0o600) if fchmod is not None else os.chmod(path, 0o600)
    finally:
        os.close(fd)


def secure_database_files(path: Path) -> None:
    """The database file (created when missing) and its existing side files, 0600."""
    _secure_file(str(path), create=True)
    for suffix in SIDE_FILE_SUFFIXES:
        _secure_file(f"{path}{suffix}", create=False)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """A UTC-aware datetime from ISO text (``Z`` or an offset; a naive time is taken as UTC)."""
    moment = datetime.fromisoformat(text.strip())
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


class Store:
    def __init__(self, path: Path, *, clock: Callable[[], datetime] = utc_now) -> None:
        self.path = path
        self.clock = clock
        if str(path) != ":memory:":
            make_missing_folders(path.parent)
            secure_database_files(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=10)
        self._db.row_factory = sqlite3.Row
        for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON"):
            self._db.execute(f"PRAGMA {pragma}")
        self._migrate()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _migrate(self) -> None:
        with self._lock:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                self._db.executescript(f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;")

    def schema_version(self) -> int:
        with self._lock:
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _now(self) -> str:
        return iso(self.clock())

    def _transaction(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = work(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(row) for row in self._db.execute(sql, params).fetchall()]

    # Subscriptions ---------------------------------------------------------------------------------
    def upsert_subscription(self, endpoint: str, p256dh: str, auth: str, culture: str | None = None) -> None:
        """Adds or renews a subscription; ``culture``: the language its pushes are written in (None: the
        server's). A browser subscribing again in another language moves the subscription to it."""
        now = self._now()
        self._transaction(lambda db: db.execute(
            "INSERT INTO Subscriptions (Endpoint, P256dh, Auth, CreatedAtUtc, UpdatedAtUtc, Culture) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(Endpoint) DO UPDATE SET P256dh = excluded.P256dh, Auth = excluded.Auth, "
            "UpdatedAtUtc = excluded.UpdatedAtUtc, IsActive = 1, DeactivatedAtUtc = NULL, FailureCount = 0, "
            "Culture = excluded.Culture",
            (endpoint, p256dh, auth, now, now, culture)))

    def deactivate_subscription(self, endpoint: str) -> bool:
        now = self._now()
        cursor = self._transaction(lambda db: db.execute(
            "UPDATE Subscriptions SET IsActive = 0, DeactivatedAtUtc = ?, UpdatedAtUtc = ? "
            "WHERE Endpoint = ? AND IsActive = 1", (now, now, endpoint)))
        return bool(cursor.rowcount)

    def subscriptions(self, *, active_only: bool = False) -> list[dict[str, Any]]:
        where = " WHERE IsActive = 1" if active_only else ""
        return self._query(f"SELECT * FROM Subscriptions{where} ORDER BY Id")

    # Webhook events --------------------------------------------------------------------------------
    def insert_event(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        """Stores a validated webhook body as a Pending event; a StopFollowUp also gets its follow-up row.
        A repeated StopFollowUp (same ``followUpId``) returns the existing follow-up and stores nothing."""
        now = self._now()

        def work(db: sqlite3.Connection) -> tuple[int, dict[str, Any] | None]:
            follow_up_id = payload.get("followUpId") if payload["eventType"] == "StopFollowUp" else None
            if follow_up_id is not None:
                row = db.execute("SELECT * FROM FollowUps WHERE Id = ?", (follow_up_id,)).fetchone()
                if row is not None:
                    return int(row["WebhookEventId"] or 0), dict(row)
            cursor = db.execute(
                "INSERT INTO WebhookEvents (EventType, Reason, Provider, ProviderName, SessionIdentifier, "
                "WorkingDirectory, FollowUpId, PayloadJson, ReceivedAtUtc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (payload["eventType"], payload.get("reason"), payload.get("provider"), payload.get("providerName"),
                 payload.get("sessionIdentifier"), payload.get("workingDirectory"), follow_up_id,
                 json.dumps(payload, ensure_ascii=False), now))
            event_id = int(cursor.lastrowid or 0)
            if follow_up_id is None:
                return event_id, None
            expires = iso(parse_iso(payload["expiresAtUtc"]))
            db.execute(
                "INSERT INTO FollowUps (Id, WebhookEventId, PollToken, Provider, ProviderName, SessionIdentifier, "
                "WorkingDirectory, InputPromptPreview, LastAssistantMessage, CreatedAtUtc, InitialExpiresAtUtc, "
                "ExpiresAtUtc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (follow_up_id, event_id, secrets.token_urlsafe(24), payload.get("provider"),
                 payload.get("providerName"), payload.get("sessionIdentifier"), payload.get("workingDirectory"),
                 payload.get("inputPromptPreview"), payload.get("lastAssistantMessage"), now, expires, expires))
            row = db.execute("SELECT * FROM FollowUps WHERE Id = ?", (follow_up_id,)).fetchone()
            return event_id, dict(row)

        result: tuple[int, dict[str, Any] | None] = self._transaction(work)
        return result

    def requeue_claimed(self) -> int:
        """At start-up: events a previous server process claimed and never finished go back to Pending."""
        cursor = self._transaction(lambda db: db.execute(
            "UPDATE WebhookEvents SET Status = 'Pending', ClaimedAtUtc = NULL WHERE Status = 'Processing'"))
        return int(cursor.rowcount)

    def claim_events(self, *, limit: int = 20, stale_seconds: float = 300) -> list[dict[str, Any]]:
        """Pending events, and Processing ones whose claim is older than ``stale_seconds``, become Processing."""
        now = self.clock()
        stale = iso(now - timedelta(seconds=stale_seconds))

        def work(db: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = [dict(row) for row in db.execute(
                "SELECT * FROM WebhookEvents WHERE Status = 'Pending' OR (Status = 'Processing' AND ClaimedAtUtc < ?) "
                "ORDER BY Id LIMIT ?", (stale, limit)).fetchall()]
            for row in rows:
                db.execute("UPDATE WebhookEvents SET Status = 'Processing', ClaimedAtUtc = ?, "
                           "AttemptCount = AttemptCount + 1 WHERE Id = ?", (iso(now), row["Id"]))
            return rows

        claimed: list[dict[str, Any]] = self._transaction(work)
        return claimed

    def settled_subscription_ids(self, event_id: int) -> set[int]:
        """Subscriptions this event already reached (or can never reach): a retried claim skips them."""
        rows = self._query("SELECT SubscriptionId FROM NotificationDeliveries WHERE WebhookEventId = ? "
                           "AND Status IN ('Succeeded', 'PermanentFailure')", (event_id,))
        return {int(row["SubscriptionId"]) for row in rows}

    def record_delivery(self, event_id: int, subscription_id: int, status: str, http_status: int | None,
                        error: str | None) -> None:
        now = self._now()

        def work(db: sqlite3.Connection) -> None:
            db.execute("INSERT INTO NotificationDeliveries (WebhookEventId, SubscriptionId, Status, HttpStatusCode, "
                       "Error, CreatedAtUtc) VALUES (?, ?, ?, ?, ?, ?)",
                       (event_id, subscription_id, status, http_status, error, now))
            if status == "Succeeded":
                db.execute("UPDATE Subscriptions SET LastSeenAtUtc = ?, FailureCount = 0 WHERE Id = ?",
                           (now, subscription_id))
            elif status == "PermanentFailure":
                db.execute("UPDATE Subscriptions SET IsActive = 0, DeactivatedAtUtc = ?, UpdatedAtUtc = ?, "
                           "LastFailureAtUtc = ?, FailureCount = FailureCount + 1 WHERE Id = ?",
                           (now, now, now, subscription_id))
            else:
                db.execute("UPDATE Subscriptions SET FailureCount = FailureCount + 1, LastFailureAtUtc = ? "
                           "WHERE Id = ?", (now, subscription_id))

        self._transaction(work)

    def finish_event(self, event_id: int, status: str, error: str | None = None) -> None:
        now = self._now()
        self._transaction(lambda db: db.execute(
            "UPDATE WebhookEvents SET Status = ?, ProcessedAtUtc = ?, LastError = ? WHERE Id = ?",
            (status, now, error, event_id)))

    def event(self, event_id: int) -> dict[str, Any] | None:
        rows = self._query("SELECT * FROM WebhookEvents WHERE Id = ?", (event_id,))
        return rows[0] if rows else None

    def latest_events(self, limit: int = 100) -> list[dict[str, Any]]:
        return self._query(
            "SELECT e.*, "
            "(SELECT COUNT(*) FROM NotificationDeliveries d WHERE d.WebhookEventId = e.Id AND d.Status = 'Succeeded')"
            " AS Succeeded, "
            "(SELECT COUNT(*) FROM NotificationDeliveries d WHERE d.WebhookEventId = e.Id "
            "AND d.Status = 'PermanentFailure') AS PermanentFailures, "
            "(SELECT COUNT(*) FROM NotificationDeliveries d WHERE d.WebhookEventId = e.Id "
            "AND d.Status = 'TransientFailure') AS TransientFailures "
            "FROM WebhookEvents e ORDER BY e.Id DESC LIMIT ?", (limit,))

    def deliveries(self, event_id: int) -> list[dict[str, Any]]:
        return self._query("SELECT * FROM NotificationDeliveries WHERE WebhookEventId = ? ORDER BY Id", (event_id,))

    def counts(self) -> dict[str, int]:
        rows = self._query(
            "SELECT (SELECT COUNT(*) FROM Subscriptions WHERE IsActive = 1) AS ActiveSubscriptions, "
            "(SELECT COUNT(*) FROM WebhookEvents) AS Events, "
            "(SELECT COUNT(*) FROM WebhookEvents WHERE Status IN ('Pending', 'Processing')) AS PendingEvents, "
            "(SELECT COUNT(*) FROM FollowUps WHERE Status = 'Pending') AS PendingFollowUps")
        return {key: int(value) for key, value in rows[0].items()}

    # Follow-ups ------------------------------------------------------------------------------------
    def _expire(self, db: sqlite3.Connection, row: sqlite3.Row | None) -> dict[str, Any] | None:
        if row is None:
            return None
        data = dict(row)
        if data["Status"] == "Pending" and parse_iso(data["ExpiresAtUtc"]) <= self.clock():
            db.execute("UPDATE FollowUps SET Status = 'Expired', FinishedAtUtc = ? WHERE Id = ? AND Status = 'Pending'",
                       (self._now(), data["Id"]))
            data["Status"] = "Expired"
        return data

    def follow_up(self, follow_up_id: str) -> dict[str, Any] | None:
        """The follow-up, turned Expired first when its deadline has passed."""
        result: dict[str, Any] | None = self._transaction(
            lambda db: self._expire(db, db.execute("SELECT * FROM FollowUps WHERE Id = ?", (follow_up_id,)).fetchone()))
        return result

    def pending_follow_ups(self) -> list[dict[str, Any]]:
        return self._query("SELECT * FROM FollowUps WHERE Status = 'Pending' ORDER BY CreatedAtUtc DESC LIMIT 20")

    def answer_follow_up(self, follow_up_id: str, action: str, *, text: str = "",
                         seconds: int = 0) -> tuple[str, dict[str, Any] | None]:
        """``action`` is reply/extend/cancel. Returns ("ok" | "missing" | "final", row after the change)."""
        now = self.clock()

        def work(db: sqlite3.Connection) -> tuple[str, dict[str, Any] | None]:
            row = self._expire(db, db.execute("SELECT * FROM FollowUps WHERE Id = ?", (follow_up_id,)).fetchone())
            if row is None:
                return "missing", None
            if row["Status"] in FINAL_STATUSES:
                return "final", row
            if action == "reply":
                db.execute("UPDATE FollowUps SET Status = 'Replied', Reply = ?, FinishedAtUtc = ? WHERE Id = ?",
                           (text, iso(now), follow_up_id))
            elif action == "cancel":
                db.execute("UPDATE FollowUps SET Status = 'Canceled', FinishedAtUtc = ? WHERE Id = ?",
                           (iso(now), follow_up_id))
            else:
                cap = parse_iso(row["InitialExpiresAtUtc"]) + timedelta(seconds=EXTEND_CAP_SECONDS)
                moved = min(parse_iso(row["ExpiresAtUtc"]) + timedelta(seconds=seconds), cap)
                db.execute("UPDATE FollowUps SET ExpiresAtUtc = ? WHERE Id = ?", (iso(moved), follow_up_id))
            return "ok", dict(db.execute("SELECT * FROM FollowUps WHERE Id = ?", (follow_up_id,)).fetchone())

        result: tuple[str, dict[str, Any] | None] = self._transaction(work)
        return result
