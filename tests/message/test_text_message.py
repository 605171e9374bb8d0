"""TextMessage: a body of one String."""

from __future__ import annotations

import pytest

from jms import TextMessage


def test_created_with_and_without_text():
    # "One factory method takes no arguments, resulting in a TextMessage object with an empty
    # payload ... The other factory method takes a String type payload as an argument."
    assert TextMessage().get_text() is None
    assert TextMessage("Hello!").get_text() == "Hello!"


def test_set_text_replaces_the_text():
    message = TextMessage()
    message.set_text("Hello!")
    assert message.get_text() == "Hello!"
    message.set_text("<order id='1'/>")
    assert message.get_text() == "<order id='1'/>"


def test_no_payload_reads_as_none_and_empty_string_is_a_payload():
    # "If the TextMessage was delivered without a payload, the getText() method returns a null value
    # or an empty String ("") depending on the JMS provider." Silent choice (docs/semantics.md):
    # None, and "" is a body of its own.
    message = TextMessage("")
    assert message.get_text() == ""
    assert message.get_body(str) == ""
    message.set_text(None)
    assert message.get_text() is None
    assert message.get_body(str) is None


@pytest.mark.parametrize("text", ["", "\x00", "ünïcödé", "\U0001f600", "\ud800", "a" * 100_000])
def test_any_java_string_is_kept_as_is(text):
    assert TextMessage(text).get_text() == text


@pytest.mark.parametrize("bad", [b"bytes", 5, ["x"]])
def test_text_must_be_a_string(bad):
    message = TextMessage("keep")
    with pytest.raises(TypeError):
        message.set_text(bad)
    assert message.get_text() == "keep"
    with pytest.raises(TypeError):
        TextMessage(bad)


def test_clear_body_removes_the_text():
    message = TextMessage("x")
    message.clear_body()
    assert message.get_text() is None
    message.set_text("y")
    assert message.get_text() == "y"
