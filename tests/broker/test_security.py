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
    LoginThrottle,
    Security,
    SecurityConfigError,
    hash_password,
    subject_key,
    verify_password,
)
from jms.stomp.tls import certificate_subject


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
        ({"users": {"bob": {}}}, r"\[users.bob\]: give a password .* or a certificate"),
        ({"users": {"bob": {"certificate": "bob"}}}, r"certificate: .bob. is not a subject"),
        ({"users": {"bob": {"password": 5}}}, "password must be a string"),
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


# --- client certificates ------------------------------------------------------------------------


def test_a_user_may_log_in_by_certificate_subject_in_either_order() -> None:
    security = Security.from_mapping(
        {
            "users": {
                "orders": {"certificate": "CN=orders-service, O=Example"},
                "alice": {"password": hash_password("secret"), "certificate": "CN=alice,O=Example"},
            }
        }
    )
    assert security.certificate_user("CN=orders-service,O=Example") == "orders"
    assert security.certificate_user("O = Example, CN = orders-service") == "orders"  # OpenSSL's
    assert security.certificate_user("cn=alice,o=Example") == "alice"
    assert security.certificate_user("CN=orders-service,O=Other") is None
    assert not security.authenticate("orders", "")  # no password: certificate logins only
    assert security.authenticate("alice", "secret")
    assert security.describe().startswith("2 users (2 by certificate)")


def test_two_users_cannot_share_a_certificate() -> None:
    with pytest.raises(SecurityConfigError, match="users 'a' and 'b' have the same certificate"):
        Security.from_mapping(
            {"users": {"a": {"certificate": "CN=x,O=y"}, "b": {"certificate": "O=y, CN=x"}}}
        )


def test_subjects_compare_with_escapes_undone() -> None:
    assert subject_key(r"CN=Smith\, John,O=Example") == (("CN", "Smith, John"), ("O", "Example"))
    decoded = {"subject": ((("organizationName", "Example"),), (("commonName", "Smith, John"),))}
    assert certificate_subject(decoded) == r"CN=Smith\, John,O=Example"
    with pytest.raises(ValueError, match="is not a subject such as CN=NAME"):
        subject_key("orders-service")


# --- failed logins ------------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failed_logins_space_out_the_next_logins_of_their_address() -> None:
    clock = _Clock()
    throttle = LoginThrottle(first_delay_s=0.5, max_delay_s=4.0, clock=clock)
    assert throttle.wait("10.0.0.1", at_most_s=30) == 0.0
    assert throttle.failed("10.0.0.1") == 1
    # Parallel logins take turns 0.5 s apart: opening more connections gains nothing.
    assert [throttle.wait("10.0.0.1", at_most_s=30) for _ in range(3)] == [0.5, 1.0, 1.5]
    assert throttle.wait("10.0.0.2", at_most_s=30) == 0.0  # other addresses are not slowed
    for _ in range(5):
        throttle.failed("10.0.0.1")
    assert throttle.delay(6) == 4.0  # the most
    assert [throttle.delay(n) for n in range(5)] == [0.0, 0.5, 1.0, 2.0, 4.0]
    throttle.succeeded("10.0.0.1")
    assert throttle.wait("10.0.0.1", at_most_s=30) == 0.0


def test_a_wait_past_the_limit_takes_no_turn_and_quiet_addresses_are_forgotten() -> None:
    clock = _Clock()
    throttle = LoginThrottle(first_delay_s=10.0, max_delay_s=10.0, forget_after_s=60, clock=clock)
    throttle.failed("10.0.0.1")
    assert throttle.wait("10.0.0.1", at_most_s=5) == 10.0  # refused: no turn taken
    assert throttle.wait("10.0.0.1", at_most_s=30) == 10.0
    clock.now += 61
    assert throttle.wait("10.0.0.1", at_most_s=30) == 0.0


def test_the_throttle_remembers_a_bounded_number_of_addresses() -> None:
    throttle = LoginThrottle(max_addresses=3, clock=_Clock())
    for number in range(5):
        throttle.failed(f"10.0.0.{number}")
    assert throttle.wait("10.0.0.0", at_most_s=30) == 0.0  # the oldest went
    assert throttle.wait("10.0.0.4", at_most_s=30) == 0.5


def test_throttle_delays_must_make_sense() -> None:
    with pytest.raises(ValueError, match=r"need 0 < first_delay_s <= max_delay_s; got 2, 1"):
        LoginThrottle(first_delay_s=2, max_delay_s=1)
