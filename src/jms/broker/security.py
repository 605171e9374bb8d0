"""Who may connect to a broker and what each user may do: users with hashed passwords and
permissions per destination pattern, read from a TOML file.

``Security.from_file(path)`` reads a config such as::

    allow_anonymous = false            # default: true only when no users are defined

    [users.alice]
    password = "scrypt:16384:8:1:<salt>:<hash>"     # from `jms hash-password`

    [[permissions]]
    destination = "queue://orders.*"   # fnmatch pattern on queue://NAME or topic://NAME
    send = ["alice"]
    receive = ["bob", "alice"]
    browse = ["*"]                     # "*": every admitted client; "anonymous": clients without a login
    admin = ["alice"]                  # stats and purge

``security.authenticate(user, password)`` is the ``Broker``'s ``authenticator`` (and the STOMP
server's); ``security.allows(principal, action, destination)`` decides one action. With no
``[[permissions]]`` every admitted client may do everything; with some, the longest pattern
matching a destination decides and a destination no pattern matches is refused. Passwords are
only ever stored as salted scrypt or PBKDF2-SHA256 hashes and compared in constant time. This
module keeps no connection state and never logs a password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any, Final

__all__ = [
    "ANONYMOUS",
    "Action",
    "Permission",
    "Security",
    "SecurityConfigError",
    "hash_password",
    "verify_password",
]

#: The principal of a client admitted without a login.
ANONYMOUS: Final = "anonymous"
_EVERYONE: Final = "*"

_SCRYPT_N: Final = 2**14
_SCRYPT_R: Final = 8
_SCRYPT_P: Final = 1
_PBKDF2_ITERATIONS: Final = 600_000
_SALT_BYTES: Final = 16
_HASH_BYTES: Final = 32


class Action(StrEnum):
    """What a client does to a destination."""

    SEND = "send"
    RECEIVE = "receive"
    BROWSE = "browse"
    ADMIN = "admin"


class SecurityConfigError(ValueError):
    """A security config that cannot be used; the message names the file, key and value."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str, *, scheme: str = "scrypt", salt: bytes | None = None) -> str:
    """A salted hash of ``password`` to store in a config: ``scrypt:N:r:p:salt:hash`` (default)
    or ``pbkdf2_sha256:iterations:salt:hash`` (salt and hash in base64)."""
    salt = os.urandom(_SALT_BYTES) if salt is None else salt
    secret = password.encode("utf-8")
    if scheme == "scrypt":
        digest = hashlib.scrypt(
            secret, salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=_HASH_BYTES
        )
        return f"scrypt:{_SCRYPT_N}:{_SCRYPT_R}:{_SCRYPT_P}:{_b64(salt)}:{_b64(digest)}"
    if scheme == "pbkdf2_sha256":
        digest = hashlib.pbkdf2_hmac("sha256", secret, salt, _PBKDF2_ITERATIONS, _HASH_BYTES)
        return f"pbkdf2_sha256:{_PBKDF2_ITERATIONS}:{_b64(salt)}:{_b64(digest)}"
    raise ValueError(f"unknown password hash scheme {scheme!r}; use scrypt or pbkdf2_sha256")


@dataclass(frozen=True, slots=True)
class _Hash:
    scheme: str
    parameters: tuple[int, ...]
    salt: bytes
    digest: bytes

    def compute(self, password: str) -> bytes:
        secret = password.encode("utf-8")
        if self.scheme == "scrypt":
            n, r, p = self.parameters
            return hashlib.scrypt(
                secret, salt=self.salt, n=n, r=r, p=p, dklen=len(self.digest), maxmem=2**28
            )
        (iterations,) = self.parameters
        return hashlib.pbkdf2_hmac("sha256", secret, self.salt, iterations, len(self.digest))


def _parse_hash(text: str) -> _Hash:
    """A stored hash taken apart; ``ValueError`` says what is wrong with it (never the text)."""
    parts = text.split(":") if isinstance(text, str) else []
    counts = {"scrypt": 3, "pbkdf2_sha256": 1}
    scheme = parts[0] if parts else ""
    if scheme not in counts or len(parts) != counts[scheme] + 3:
        raise ValueError(
            "a password must be stored as scrypt:N:r:p:SALT:HASH or "
            "pbkdf2_sha256:ITERATIONS:SALT:HASH (make one with `jms hash-password`)"
        )
    try:
        parameters = tuple(int(part) for part in parts[1:-2])
        salt = base64.b64decode(parts[-2], validate=True)
        digest = base64.b64decode(parts[-1], validate=True)
    except ValueError:
        raise ValueError(
            f"the {scheme} hash has a parameter, salt or hash that does not parse"
        ) from None
    if any(value < 1 for value in parameters) or not salt or len(digest) < 16:
        raise ValueError(f"the {scheme} hash has a parameter below 1, no salt or a short hash")
    if scheme == "scrypt" and parameters[0] & (parameters[0] - 1):
        raise ValueError(f"scrypt N must be a power of 2; got {parameters[0]}")
    return _Hash(scheme, parameters, salt, digest)


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a hash made by ``hash_password`` (constant-time compare)."""
    hashed = _parse_hash(stored)
    return hmac.compare_digest(hashed.compute(password), hashed.digest)


@dataclass(frozen=True, slots=True)
class Permission:
    """Who may do what on the destinations matching ``pattern`` (``queue://orders.*``)."""

    pattern: str
    grants: dict[Action, frozenset[str]]

    def allows(self, principal: str, action: Action) -> bool:
        granted = self.grants.get(action, frozenset())
        return principal in granted or _EVERYONE in granted


_TOP_LEVEL_KEYS: Final = ("allow_anonymous", "users", "permissions")
_USER_KEYS: Final = ("password",)
_PERMISSION_KEYS: Final = ("destination", *(action.value for action in Action))


class Security:
    """Users and permissions (see the module docstring). Immutable once built; thread-safe."""

    def __init__(
        self,
        users: dict[str, str] | None = None,
        permissions: list[Permission] | None = None,
        *,
        allow_anonymous: bool | None = None,
        source: str = "the security config",
    ) -> None:
        self.source = source
        self._users = {name: _parse_hash(stored) for name, stored in (users or {}).items()}
        self._permissions = sorted(permissions or [], key=lambda p: len(p.pattern), reverse=True)
        self.allow_anonymous = not self._users if allow_anonymous is None else allow_anonymous
        if not self.allow_anonymous and not self._users:
            raise SecurityConfigError(
                f"{source}: allow_anonymous is false but no [users] are defined: nobody could connect"
            )
        # Compared against when the user is unknown, so both cases take the same time.
        self._decoy = _Hash(
            "scrypt", (_SCRYPT_N, _SCRYPT_R, _SCRYPT_P), b"jms-decoy-salt", bytes(_HASH_BYTES)
        )

    @classmethod
    def open(cls) -> Security:
        """Anonymous clients welcome and allowed everything (``jms broker`` without --config)."""
        return cls()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Security:
        """Read a TOML config (see the module docstring); ``SecurityConfigError`` names what is
        wrong and where."""
        where = str(path)
        try:
            with open(path, "rb") as file:
                data = tomllib.load(file)
        except OSError as error:
            raise SecurityConfigError(f"cannot read {where}: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise SecurityConfigError(f"{where} is not valid TOML: {error}") from None
        return cls.from_mapping(data, source=where)

    @classmethod
    def from_mapping(cls, data: dict[str, Any], *, source: str = "the security config") -> Security:
        """Build from the parsed TOML of a config (see ``from_file``)."""
        _check_keys(data, _TOP_LEVEL_KEYS, source)
        allow = data.get("allow_anonymous")
        if allow is not None and not isinstance(allow, bool):
            raise SecurityConfigError(
                f"{source}: allow_anonymous must be true or false; got {allow!r}"
            )
        users: dict[str, str] = {}
        raw_users = data.get("users", {})
        if not isinstance(raw_users, dict):
            raise SecurityConfigError(f"{source}: [users] must be a table of [users.NAME] tables")
        for name, entry in raw_users.items():
            where = f"{source}: [users.{name}]"
            if name in (ANONYMOUS, _EVERYONE):
                raise SecurityConfigError(
                    f"{where}: {name!r} is reserved and cannot be a user name"
                )
            if not isinstance(entry, dict):
                raise SecurityConfigError(f"{where} must be a table with a password")
            _check_keys(entry, _USER_KEYS, where)
            password = entry.get("password")
            if not isinstance(password, str):
                raise SecurityConfigError(
                    f"{where}: password (a hash from `jms hash-password`) is missing"
                )
            try:
                _parse_hash(password)
            except ValueError as error:
                raise SecurityConfigError(f"{where}: {error}") from None
            users[name] = password
        permissions = []
        raw_permissions = data.get("permissions", [])
        if not isinstance(raw_permissions, list):
            raise SecurityConfigError(
                f"{source}: permissions must be an array of [[permissions]] tables"
            )
        for number, entry in enumerate(raw_permissions, 1):
            where = f"{source}: [[permissions]] #{number}"
            if not isinstance(entry, dict):
                raise SecurityConfigError(f"{where} must be a table")
            _check_keys(entry, _PERMISSION_KEYS, where)
            pattern = entry.get("destination")
            if not isinstance(pattern, str) or not pattern.startswith(
                ("queue://", "topic://", "*")
            ):
                raise SecurityConfigError(
                    f"{where}: destination must be a pattern such as queue://orders.* or "
                    f"topic://*; got {pattern!r}"
                )
            grants = {}
            for action in Action:
                names = entry.get(action.value, [])
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise SecurityConfigError(
                        f"{where}: {action.value} must be a list of user names; got {names!r}"
                    )
                unknown = [n for n in names if n not in users and n not in (ANONYMOUS, _EVERYONE)]
                if unknown:
                    raise SecurityConfigError(
                        f"{where}: {action.value} names unknown user(s) {', '.join(map(repr, unknown))}"
                    )
                grants[action] = frozenset(names)
            permissions.append(Permission(pattern, grants))
        return cls(users, permissions, allow_anonymous=allow, source=source)

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(self._users)

    @property
    def restricted(self) -> bool:
        """Whether some action on some destination is refused to someone admitted."""
        return bool(self._permissions)

    def describe(self) -> str:
        """One line for a startup log: who gets in."""
        if not self._users:
            return "anonymous access (no users defined)"
        users = f"{len(self._users)} user{'s' if len(self._users) != 1 else ''}"
        anonymous = "anonymous allowed" if self.allow_anonymous else "login required"
        permissions = (
            f"{len(self._permissions)} permission rule{'s' if len(self._permissions) != 1 else ''}"
            if self._permissions
            else "no permission rules"
        )
        return f"{users}, {anonymous}, {permissions}"

    def authenticate(self, user: str | None, password: str | None) -> bool:
        """Whether a client may connect: a known user with the right password, or, when
        anonymous access is allowed, a client without a user name (and any client at all when
        no users are defined: there is nothing to check a name against)."""
        if user is None or user == "" or not self._users:
            return self.allow_anonymous
        hashed = self._users.get(user)
        candidate = password or ""
        if hashed is None:
            self._decoy.compute(candidate)
            return False
        return hmac.compare_digest(hashed.compute(candidate), hashed.digest)

    def principal(self, user: str | None) -> str:
        """The name permissions know an authenticated client by."""
        return user if user else ANONYMOUS

    def grants_anywhere(self, principal: str, action: Action) -> bool:
        """Whether some permission rule lets ``principal`` ``action`` the destinations it
        matches (every action, without rules)."""
        return not self._permissions or any(
            permission.allows(principal, action) for permission in self._permissions
        )

    def allows(self, principal: str, action: Action, destination: str) -> bool:
        """Whether ``principal`` may ``action`` the destination with text form ``destination``
        (``queue://orders``). Temporary destinations are not subject to permissions."""
        if not self._permissions or destination.startswith(("temp-queue://", "temp-topic://")):
            return True
        for permission in self._permissions:
            if fnmatchcase(destination, permission.pattern):
                return permission.allows(principal, action)
        return False


def _check_keys(table: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise SecurityConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(known)}"
        )
