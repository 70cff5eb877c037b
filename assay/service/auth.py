"""Users, passwords, API tokens, server-side sessions, CSRF tokens and the audit log.

* Passwords: argon2id (argon2-cffi's :class:`~argon2.PasswordHasher` defaults).
* API tokens and session cookies: 32 random bytes (``secrets.token_urlsafe``) shown once; the
  store keeps only their sha256, so a copy of the store reveals no usable credential. Both are
  revoked server-side (``revoked_at``); a revoked or expired one is refused at once.
* CSRF: each session carries its own random token; every form posts it back and a POST whose
  token differs (compared in constant time) is refused (synchroniser-token pattern).

>>> digest("abc")[:12]
'ba7816bf8f01'
"""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine

from assay.errors import AssayInputError
from assay.labels.schema import now
from assay.service.schema import (NAME, ROLES, audit_table, sessions_table, tokens_table,
                                  users_table)

SESSION_HOURS = 12
FAILED_LOGINS, FAILED_WINDOW_MINUTES = 10, 15
_hasher = PasswordHasher()


@dataclass(frozen=True)
class User:
    """A logged-in user: id, login, role and team (a submitter's; None for others)."""

    id: int
    name: str
    role: str
    team: str | None


def digest(secret: str) -> str:
    """sha256 hex of a token or cookie secret (what the store keeps)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _user(r: Any) -> User:
    return User(int(r.id), r.name, r.role, r.team)


def _name_ok(name: str) -> bool:
    return bool(name) and len(name) <= NAME and name.replace("-", "").replace(
        "_", "").replace(".", "").isalnum()


def add_user(engine: Engine, name: str, role: str, password: str,
             team: str | None = None) -> User:
    """Create a user (argon2 hash of the password); a bad role, name or password, or a name
    taken, is an :class:`AssayInputError`."""
    if role not in ROLES:
        raise AssayInputError("--role", repr(role), expected=" | ".join(ROLES))
    if not _name_ok(name):
        raise AssayInputError("user name", repr(name),
                              expected="1-200 letters, digits, '-', '_' or '.'")
    if len(password) < 8:
        raise AssayInputError("password", "shorter than 8 characters",
                              expected="at least 8 characters")
    if role == "submitter" and not team:
        raise AssayInputError("--team", "missing", expected="a team for a submitter")
    if team is not None and not _name_ok(team):     # no '/': systems are named team/system
        raise AssayInputError("--team", repr(team),
                              expected="1-200 letters, digits, '-', '_' or '.'")
    u = users_table
    with engine.begin() as conn:
        if conn.execute(select(u.c.id).where(u.c.name == name)).first() is not None:
            raise AssayInputError("user name", f"{name!r} is taken", expected="a new name")
        conn.execute(insert(u).values(name=name, role=role, team=team,
                                      password_hash=_hasher.hash(password), active=1,
                                      created_at=now()))
        row = conn.execute(select(u).where(u.c.name == name)).one()
    audit(engine, None, "user-added", detail={"user": name, "role": role, "team": team})
    return _user(row)


def check_password(engine: Engine, name: str, password: str) -> User | None:
    """The user if ``password`` is theirs and the account is active, else None."""
    with engine.connect() as conn:
        row = conn.execute(select(users_table).where(users_table.c.name == name)).first()
    if row is None or not row.active:
        _hasher.hash(password)          # about the same time whether the name exists or not
        return None
    try:
        _hasher.verify(row.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    return _user(row)


def failed_login_detail(client: str | None) -> dict[str, Any]:
    """The audit detail of a failed log-in: the client's address (lockout is per name and
    client, so nobody can lock a user out from elsewhere by failing on purpose)."""
    return {"client": str(client or "")[:NAME]}


def too_many_failures(engine: Engine, name: str, client: str | None = None) -> bool:
    """True when ``name`` had :data:`FAILED_LOGINS` failed log-ins from ``client`` in the last
    :data:`FAILED_WINDOW_MINUTES` minutes (then log-in from that client is refused, even with
    the right password, until the window passes)."""
    from sqlalchemy import func
    a = audit_table
    since = now() - dt.timedelta(minutes=FAILED_WINDOW_MINUTES)
    detail = json.dumps(failed_login_detail(client), default=str)
    with engine.connect() as conn:
        n = conn.execute(select(func.count()).select_from(a).where(
            (a.c.action == "login-failed") & (a.c.user == name[:NAME]) & (a.c.at >= since)
            & (a.c.detail == detail))).scalar_one()
    return int(n) >= FAILED_LOGINS


def user_by_name(engine: Engine, name: str) -> User | None:
    with engine.connect() as conn:
        row = conn.execute(select(users_table).where(users_table.c.name == name)).first()
    return None if row is None else _user(row)


# -- API tokens ------------------------------------------------------------------------------
def new_token(engine: Engine, user: User, label: str | None = None) -> tuple[int, str]:
    """A new API token for ``user``: (its id, the secret — shown once, stored hashed)."""
    secret = "assay_" + secrets.token_urlsafe(32)
    with engine.begin() as conn:
        res = conn.execute(insert(tokens_table).values(
            user_id=user.id, digest=digest(secret), label=label, created_at=now()))
        tid = int(res.inserted_primary_key[0])
    audit(engine, user.name, "token-created", detail={"token": tid})
    return tid, secret


def revoke_token(engine: Engine, user: User, token_id: int) -> bool:
    """Revoke one of ``user``'s tokens (an admin may revoke anyone's); False if none."""
    t = tokens_table
    cond = (t.c.id == token_id) & t.c.revoked_at.is_(None)
    if user.role != "admin":
        cond = cond & (t.c.user_id == user.id)
    with engine.begin() as conn:
        n = conn.execute(update(t).where(cond).values(revoked_at=now())).rowcount
    if n:
        audit(engine, user.name, "token-revoked", detail={"token": token_id})
    return bool(n)


def token_user(engine: Engine, secret: str) -> User | None:
    """The active user of a live (not revoked) token."""
    t, u = tokens_table, users_table
    q = select(u).join(t, t.c.user_id == u.c.id).where(
        (t.c.digest == digest(secret)) & t.c.revoked_at.is_(None) & (u.c.active == 1))
    with engine.connect() as conn:
        row = conn.execute(q).first()
    return None if row is None else _user(row)


# -- sessions and CSRF -----------------------------------------------------------------------
def new_session(engine: Engine, user: User) -> str:
    """Start a session; returns the cookie's secret (the store keeps its sha256)."""
    secret = secrets.token_urlsafe(32)
    t = now()
    with engine.begin() as conn:
        conn.execute(insert(sessions_table).values(
            user_id=user.id, digest=digest(secret), csrf=secrets.token_urlsafe(24),
            created_at=t, expires_at=t + dt.timedelta(hours=SESSION_HOURS)))
    audit(engine, user.name, "login")
    return secret


def session_user(engine: Engine, secret: str) -> tuple[User, str] | None:
    """(user, CSRF token) of a live session cookie, else None."""
    s, u = sessions_table, users_table
    q = select(u, s.c.csrf).join(s, s.c.user_id == u.c.id).where(
        (s.c.digest == digest(secret)) & s.c.revoked_at.is_(None) & (s.c.expires_at > now())
        & (u.c.active == 1))
    with engine.connect() as conn:
        row = conn.execute(q).first()
    return None if row is None else (_user(row), str(row.csrf))


def end_session(engine: Engine, secret: str) -> None:
    with engine.begin() as conn:
        conn.execute(update(sessions_table).where(sessions_table.c.digest == digest(secret))
                     .values(revoked_at=now()))


def revoke_sessions(engine: Engine, user_name: str) -> int:
    """Revoke every live session of a user (server-side logout everywhere)."""
    u = user_by_name(engine, user_name)
    if u is None:
        return 0
    with engine.begin() as conn:
        return int(conn.execute(update(sessions_table).where(
            (sessions_table.c.user_id == u.id) & sessions_table.c.revoked_at.is_(None))
            .values(revoked_at=now())).rowcount)


def csrf_ok(expected: str, given: str | None) -> bool:
    """Constant-time comparison of the session's CSRF token with the one posted."""
    return bool(given) and hmac.compare_digest(expected.encode(), str(given).encode())


# -- audit log -------------------------------------------------------------------------------
def audit(engine: Engine, user: str | None, action: str, campaign: str | None = None,
          item: str | None = None, detail: dict[str, Any] | None = None,
          conn: Any = None) -> None:
    """Append to the audit log (inside ``conn``'s transaction when given)."""
    row = dict(at=now(), user=user, action=action, campaign=campaign, item=item,
               detail=None if detail is None else json.dumps(detail, default=str))
    if conn is not None:
        conn.execute(insert(audit_table).values(**row))
        return
    with engine.begin() as c:
        c.execute(insert(audit_table).values(**row))


__all__ = ["FAILED_LOGINS", "SESSION_HOURS", "User", "add_user", "audit", "check_password", "csrf_ok", "digest",
           "end_session", "new_session", "new_token", "revoke_sessions", "revoke_token",
           "session_user", "token_user", "too_many_failures", "user_by_name"]
