"""The embedded broker registry: one broker per memory:// URL for the whole process."""

from __future__ import annotations

import uuid

import pytest

from jms.broker import close_embedded_broker, embedded_broker
from jms.errors import JMSException


def test_one_broker_per_name_and_a_default_one() -> None:
    name = f"memory://registry-{uuid.uuid4().hex[:8]}"
    try:
        assert embedded_broker(name) is embedded_broker(name)
        assert embedded_broker(name) is not embedded_broker("memory://")
        assert embedded_broker(name).name == name.removeprefix("memory://")
        assert embedded_broker("memory://").name == "default"
    finally:
        close_embedded_broker(name)


def test_closing_forgets_the_broker_and_the_next_use_starts_a_new_one() -> None:
    name = f"memory://registry-{uuid.uuid4().hex[:8]}"
    first = embedded_broker(name)
    close_embedded_broker(name)
    assert first.closed
    second = embedded_broker(name)
    assert second is not first and not second.closed
    close_embedded_broker(name)
    close_embedded_broker(name)  # nothing left: no error


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("stomp://localhost:61613", "not an embedded broker URL"),
        ("memory:/x", "not an embedded broker URL"),
        ("memory://a/b", "may not contain"),
    ],
)
def test_bad_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(JMSException, match=message):
        embedded_broker(url)
