"""Users, hashed passwords and per-destination permissions (``jms.broker.security``), and the same
authenticator guarding an in-process broker."""

from __future__ import annotations

from pathlib import Path

import pytest

from jms import ConnectionFactory, JMSSecurityException
from jms.broker import close_embedded_broker, open_broker
from jms.broker.security import (
    ANONYMOUS,
    Action,
    Security,
    SecurityConfigError,
    hash_password,
    verify_password,
)


@pytest.mark.parametrize("scheme", ["scrypt", "pbkdf2_sha256"])
def test_a_hash_verifies_its_password_only(scheme: str) -> None:
    stored = hash_password("s3cret", scheme=scheme)
    assert stored.startswith(f"{scheme}:") and "s3cret" not in stored
    assert verify_password("s3cret", stored)
    assert not verify_password("s3cret ", stored)
    assert hash_password("s3cret", scheme=scheme) != stored  # salted


@pytest.mark.parametrize(
    ("stored", "complaint"),
    [
        ("plain-text-password", "must be stored as scrypt"),
        ("scrypt:16384:8:1:c2FsdA==", "must be stored as scrypt"),
        ("scrypt:1000:8:1:c2FsdA==:" + "A" * 44, "power of 2"),
        ("pbkdf2_sha256:0:c2FsdA==:" + "A" * 44, "below 1"),
        ("pbkdf2_sha256:10:not base64!:" + "A" * 44, "does not parse"),
    ],
)
def test_a_malformed_stored_hash_is_refused(stored: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        verify_password("x", stored)


def test_unknown_scheme_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown password hash scheme 'md5'"):
        hash_password("x", scheme="md5")


def _security(**config: object) -> Security:
    return Security.from_mapping(
        {"users": {"alice": {"password": hash_password("a", scheme="pbkdf2_sha256")}}, **config}
    )


def test_who_gets_in() -> None:
    assert Security.open().authenticate(None, None)
    assert Security.open().authenticate("anyone", "anything")  # no users: nothing to check
    users_only = _security()
    assert users_only.authenticate("alice", "a")
    assert not users_only.authenticate("alice", "b")
    assert not users_only.authenticate("mallory", "a")
    assert not users_only.authenticate(None, None)  # users defined: a login is required
    assert _security(allow_anonymous=True).authenticate(None, None)
    assert users_only.describe() == "1 user, login required, no permission rules"


def test_permissions_longest_pattern_decides() -> None:
    security = _security(
        allow_anonymous=True,
        permissions=[
            {"destination": "queue://*", "send": ["*"], "receive": ["alice"]},
            {"destination": "queue://orders.*", "send": ["alice"], "browse": [ANONYMOUS]},
        ],
    )
    assert security.allows("bob", Action.SEND, "queue://invoices")
    assert not security.allows("bob", Action.SEND, "queue://orders.eu")
    assert security.allows("alice", Action.SEND, "queue://orders.eu")
    assert not security.allows("alice", Action.RECEIVE, "queue://orders.eu")  # the longer rule
    assert security.allows(ANONYMOUS, Action.BROWSE, "queue://orders.eu")
    assert not security.allows("alice", Action.ADMIN, "queue://invoices")
    assert not security.allows("alice", Action.SEND, "topic://news")  # no rule matches
    assert security.allows("bob", Action.RECEIVE, "temp-queue://abc.1")  # not subject to rules
    assert Security.open().allows(ANONYMOUS, Action.ADMIN, "queue://x")  # no rules: all allowed


def test_who_administers_anything() -> None:
    security = _security(
        allow_anonymous=True,
        permissions=[
            {"destination": "queue://orders.*", "admin": ["alice"], "send": ["*"]},
            {"destination": "topic://*", "admin": [ANONYMOUS]},
        ],
    )
    assert security.grants_anywhere("alice", Action.ADMIN)
    assert security.grants_anywhere(ANONYMOUS, Action.ADMIN)
    assert not security.grants_anywhere("bob", Action.ADMIN)  # may send, administers nothing
    assert security.grants_anywhere("bob", Action.SEND)
    assert Security.open().grants_anywhere(ANONYMOUS, Action.ADMIN)  # no rules: everyone


@pytest.mark.parametrize(
    ("config", "complaint"),
    [
        ({"allowed_anonymous": True}, "unknown key"),
        ({"allow_anonymous": "yes"}, "allow_anonymous must be true or false"),
        ({"users": {"bob": {}}}, "password .* is missing"),
        ({"users": {"bob": {"password": "hunter2"}}}, r"\[users.bob\]: a password must be stored"),
        ({"users": {"*": {"password": hash_password("x")}}}, "reserved"),
        ({"permissions": [{"destination": "orders"}]}, "destination must be a pattern"),
        ({"permissions": [{"destination": "queue://a", "send": "alice"}]}, "send must be a list"),
        ({"permissions": [{"destination": "queue://a", "send": ["carol"]}]}, "unknown user.*carol"),
        ({"permissions": [{"destination": "queue://a", "write": ["*"]}]}, "unknown key.*write"),
    ],
)
def test_config_mistakes_say_what_and_where(config: dict[str, object], complaint: str) -> None:
    with pytest.raises(SecurityConfigError, match=complaint):
        Security.from_mapping(config, source="broker.toml")


def test_no_users_and_no_anonymous_is_refused() -> None:
    with pytest.raises(SecurityConfigError, match="nobody could connect"):
        Security.from_mapping({"allow_anonymous": False})


def test_a_config_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "broker.toml"
    path.write_text(
        f'[users.alice]\npassword = "{hash_password("a")}"\n\n'
        '[[permissions]]\ndestination = "queue://*"\nsend = ["alice"]\n'
    )
    security = Security.from_file(path)
    assert security.users == ("alice",) and security.restricted
    path.write_text("[users\n")
    with pytest.raises(SecurityConfigError, match="is not valid TOML"):
        Security.from_file(path)
    with pytest.raises(SecurityConfigError, match="cannot read"):
        Security.from_file(tmp_path / "missing.toml")


def test_the_same_authenticator_guards_an_in_process_broker() -> None:
    url = "memory://security-in-process"
    open_broker(url, authenticator=_security().authenticate)
    try:
        with ConnectionFactory(url, user="alice", password="a").create_connection():
            pass
        with pytest.raises(JMSSecurityException, match="refused user 'alice'"):
            ConnectionFactory(url, user="alice", password="wrong").create_connection()
    finally:
        close_embedded_broker(url)
