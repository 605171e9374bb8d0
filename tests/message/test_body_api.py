"""get_body / is_body_assignable_to (JMS 2.0) for every message type, with and without a body.

API.md: "get_body(cls), is_body_assignable_to(cls) with Python classes: Text→str, Bytes→bytes,
Map→dict, Object→the object's class or a base, object for any." "A MapMessage with no entries and
a BytesMessage with no bytes have no body: get_body(cls) returns None for any cls (as for an empty
Text/Object message)."
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from jms import (
    BytesMessage,
    MapMessage,
    Message,
    MessageFormatException,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from jms.types import Int


@dataclass
class Point:
    x: int


class MyStr(str):
    pass


def bytes_message(data: bytes) -> BytesMessage:
    message = BytesMessage()
    message.write_bytes(data)
    return message


def map_message(**entries: int) -> MapMessage:
    message = MapMessage()
    for name, value in entries.items():
        message.set_int(name, value)
    return message


def stream_message(*values: Any) -> StreamMessage:
    message = StreamMessage()
    for value in values:
        message.write_object(value)
    return message


MISSING = object()  # MessageFormatException expected

CLASSES = [object, str, bytes, bytearray, dict, list, int, Point, Sequence, Mapping, MyStr]

# (message factory, {class: expected body or MISSING}); a class not listed is MISSING.
WITH_BODY: list[tuple[str, Callable[[], Message], dict[type, Any]]] = [
    # "If the message is a TextMessage then this parameter must be set to String.class or another
    # type to which a String is assignable."
    ("text", lambda: TextMessage("hi"), {object: "hi", str: "hi", Sequence: "hi"}),
    # "If the message is a BytesMessage then this parameter must be set to byte[].class (or
    # java.lang.Object.class)."
    # ("the specified class or interface must be either the same as, or a superclass or
    # superinterface of, the class of the message body": bytes is a Sequence.)
    (
        "bytes",
        lambda: bytes_message(b"\x01\x02"),
        {object: b"\x01\x02", bytes: b"\x01\x02", Sequence: b"\x01\x02"},
    ),
    # "If the message is a MapMessage then this parameter must be set to java.util.Map.class (or
    # java.lang.Object.class)."
    ("map", lambda: map_message(a=1), {object: {"a": 1}, dict: {"a": 1}, Mapping: {"a": 1}}),
    # "If the message is a ObjectMessage then parameter must must be set to
    # java.io.Serializable.class or another type to which the body is assignable."
    (
        "object-list",
        lambda: ObjectMessage([1, 2]),
        {object: [1, 2], list: [1, 2], Sequence: [1, 2]},
    ),
    ("object-int", lambda: ObjectMessage(5), {object: 5, int: 5}),
    (
        "object-point",
        lambda: ObjectMessage(Point(1), allowed_classes=[Point]),
        {object: Point(1), Point: Point(1)},
    ),
]

WITHOUT_BODY: list[tuple[str, Callable[[], Message]]] = [
    # "If the message is a Message (but not one of its subtypes) then this parameter may be set to
    # any type; the returned value will always be null."
    ("message", Message),
    # "If the message is a TextMessage, ObjectMessage, MapMessage or BytesMessage and the message
    # has no body, then the above does not apply and this parameter may be set to any type; the
    # returned value will always be null."
    ("text", TextMessage),
    ("bytes", BytesMessage),
    ("bytes-read-mode", lambda: _reset(BytesMessage())),
    ("map", MapMessage),
    ("object", ObjectMessage),
    ("object-none", lambda: ObjectMessage(None)),
]


def _reset(message: BytesMessage) -> BytesMessage:
    message.reset()
    return message


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("name", "factory", "expected"), WITH_BODY, ids=[w[0] for w in WITH_BODY])
def test_get_body_with_a_body(name, factory, expected, cls):
    message = factory()
    want = expected.get(cls, MISSING)
    if want is MISSING:
        # "MessageFormatException - if the message body cannot be assigned to the specified type"
        with pytest.raises(MessageFormatException):
            message.get_body(cls)
        assert message.is_body_assignable_to(cls) is False
    else:
        body = message.get_body(cls)
        assert body == want and isinstance(body, cls)
        assert message.is_body_assignable_to(cls) is True


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("name", "factory"), WITHOUT_BODY, ids=[w[0] for w in WITHOUT_BODY])
def test_no_body_is_none_for_any_class(name, factory, cls):
    # isBodyAssignableTo: "If the message has no body then any type may be specified and true is
    # returned."
    message = factory()
    assert message.get_body(cls) is None
    assert message.is_body_assignable_to(cls) is True


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("values", [(), (Int(1),), (b"x", "s")], ids=["empty", "int", "two"])
def test_stream_message_has_no_get_body(values, cls):
    # getBody: "This method may be called on any type of message except for StreamMessage."
    # "MessageFormatException - if the message is a StreamMessage". isBodyAssignableTo: "If the
    # message is a StreamMessage then false is always returned."
    message = stream_message(*values)
    with pytest.raises(MessageFormatException):
        message.get_body(cls)
    assert message.is_body_assignable_to(cls) is False
    message.reset()
    with pytest.raises(MessageFormatException):
        message.get_body(cls)


def test_get_body_of_a_map_holds_typed_values():
    body = map_message(a=1).get_body(dict)
    assert type(body["a"]) is Int


def test_object_message_whose_deserialisation_fails():
    # isBodyAssignableTo: "If the message is a ObjectMessage and object deserialization fails then
    # false is returned." getBody: MessageFormatException "if the message is an ObjectMessage and
    # object deserialization fails."
    message = ObjectMessage(Point(1))  # Point is not on the default allow-list
    assert message.is_body_assignable_to(object) is False
    assert message.is_body_assignable_to(Point) is False
    with pytest.raises(MessageFormatException):
        message.get_body(object)


ALL_MESSAGES = [factory for _, factory, _ in WITH_BODY] + [factory for _, factory in WITHOUT_BODY]


@pytest.mark.parametrize("factory", ALL_MESSAGES)
@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_assignable_means_get_body_does_not_raise(factory, cls):
    # "If this method returns true then a subsequent call to the method getBody on the same message
    # with the same type argument would not throw a MessageFormatException."
    message = factory()
    assignable = message.is_body_assignable_to(cls)
    try:
        message.get_body(cls)
    except MessageFormatException:
        assert not assignable
    else:
        assert assignable


@pytest.mark.parametrize("factory", [Message, lambda: TextMessage("x"), lambda: ObjectMessage(1)])
@pytest.mark.parametrize("not_a_class", ["str", None, str | None])
def test_the_argument_must_be_a_class(factory, not_a_class):
    message = factory()
    with pytest.raises(TypeError):
        message.get_body(not_a_class)
    with pytest.raises(TypeError):
        message.is_body_assignable_to(not_a_class)


def test_get_body_of_an_object_message_is_a_fresh_copy():
    message = ObjectMessage({"a": [1]})
    message.get_body(dict)["a"].append(2)
    assert message.get_body(dict) == {"a": [1]}


def test_empty_text_is_a_body():
    # An empty String is a String: only a null text means no body.
    message = TextMessage("")
    assert message.get_body(str) == ""
    with pytest.raises(MessageFormatException):
        message.get_body(bytes)
