"""ObjectMessage: serialised at set_object, deserialised only through an allow-list.

API.md: "ObjectMessage never unpickles untrusted data blindly: deserialisation is limited to an
allow-list of classes (configurable), and refusal raises MessageFormatException. The default
allow-list is Python's builtin scalars and containers (NoneType, bool, int, float, complex, str,
bytes, bytearray, list, tuple, dict, set, frozenset) plus datetime.date/time/datetime/timedelta,
decimal.Decimal and uuid.UUID; any other class must be allowed explicitly."
"""

from __future__ import annotations

import datetime
import decimal
import os
import pickle
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jms import MessageFormatException, ObjectMessage
from jms.message import DEFAULT_ALLOWED_CLASSES


@dataclass
class Point:
    x: int
    y: int


RAN: list[str] = []


def _record(what: str) -> str:
    RAN.append(what)
    return what


class RunsOnLoad:
    """Unpickling it would call _record: foreign code that must never run."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_record, ("reduce ran",))


class WritesMarker:
    """Unpickling it would run a shell command that creates a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.path}",))


class SetsStateOnLoad:
    def __setstate__(self, state: Any) -> None:
        RAN.append("setstate ran")


class AsksForBytes:
    """A few bytes of pickle that ask for bytes(10**12): a terabyte of zeros."""

    def __init__(self, constructor: type) -> None:
        self.constructor = constructor

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.constructor, (10**12,))


@pytest.fixture(autouse=True)
def _nothing_ran():
    RAN.clear()
    yield
    assert RAN == [], "foreign code ran during deserialisation"


def test_the_object_is_serialised_when_set():
    # Java serialises at setObject: "later changes to the object do not change the message"
    # (issue 2).
    value = {"items": [1, 2]}
    message = ObjectMessage()
    message.set_object(value)
    value["items"].append(3)
    value["new"] = True
    assert message.get_object() == {"items": [1, 2]}


def test_constructor_serialises_too():
    value = [1]
    message = ObjectMessage(value)
    value.append(2)
    assert message.get_object() == [1]


def test_each_get_object_is_a_fresh_copy():
    message = ObjectMessage({"a": [1]})
    first = message.get_object()
    first["a"].append(2)
    assert message.get_object() == {"a": [1]}
    assert message.get_object() is not message.get_object()


def test_no_body_reads_as_none():
    # "If the ObjectMessage was delivered without a payload, the getObject() method returns a null
    # value."
    assert ObjectMessage().get_object() is None
    message = ObjectMessage([1])
    message.set_object(None)
    assert message.get_object() is None
    assert message.get_serialized_object() is None


DEFAULT_VALUES = [
    True,
    0,
    10**30,
    -1.5,
    float("inf"),
    1 + 2j,
    "text",
    "\ud800",
    b"\x00bytes",
    bytearray(b"ba"),
    [1, [2, [3]]],
    (1, "two", (3.0,)),
    {"a": 1, 2: "b", (3,): None},
    {1, 2},
    frozenset({"x"}),
    datetime.date(2024, 2, 29),
    datetime.time(12, 30, 15, 123),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
    datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC),
    datetime.datetime(2024, 1, 2, 3, 4, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    datetime.timedelta(days=-1, seconds=5, microseconds=7),
    decimal.Decimal("1.10"),
    decimal.Decimal("-Infinity"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    {
        "when": datetime.date(2000, 1, 1),
        "ids": [uuid.UUID(int=1)],
        "price": decimal.Decimal("9.99"),
    },
]


@pytest.mark.parametrize("value", DEFAULT_VALUES, ids=repr)
def test_the_default_allow_list_round_trips(value):
    read = ObjectMessage(value).get_object()
    assert read == value and type(read) is type(value)


def test_none_round_trips_inside_containers():
    assert ObjectMessage([None, {"k": None}]).get_object() == [None, {"k": None}]


def test_default_allow_list_names_the_api_classes():
    api_classes = [
        type(None),
        bool,
        int,
        float,
        complex,
        str,
        bytes,
        bytearray,
        list,
        tuple,
        dict,
        set,
        frozenset,
        datetime.date,
        datetime.time,
        datetime.datetime,
        datetime.timedelta,
        decimal.Decimal,
        uuid.UUID,
    ]
    for cls in api_classes:
        assert f"{cls.__module__}.{cls.__qualname__}" in DEFAULT_ALLOWED_CLASSES
    assert ObjectMessage().get_allowed_classes() >= DEFAULT_ALLOWED_CLASSES


def test_a_class_not_on_the_allow_list_is_refused():
    message = ObjectMessage(Point(1, 2))
    with pytest.raises(MessageFormatException, match="Point"):
        message.get_object()


def test_refusal_runs_no_reduce_callable():
    message = ObjectMessage(RunsOnLoad())
    with pytest.raises(MessageFormatException):
        message.get_object()
    # The autouse fixture checks RAN is still empty; here is the same check in plain sight.
    assert RAN == []
    # The same bytes given to plain pickle would have run it: the test can tell.
    pickle.loads(message.get_serialized_object())
    assert RAN == ["reduce ran"]
    RAN.clear()


def test_refusal_runs_no_shell_command(tmp_path):
    marker = tmp_path / "marker"
    message = ObjectMessage(WritesMarker(marker))
    with pytest.raises(MessageFormatException, match="system"):
        message.get_object()
    assert not marker.exists()


def test_refusal_runs_no_setstate():
    message = ObjectMessage(SetsStateOnLoad())
    with pytest.raises(MessageFormatException):
        message.get_object()


@pytest.mark.parametrize(
    "data",
    [
        b"\x80\x04\x8c\x0cjms_evil_mod\x8c\x05Thing\x93)\x81.",  # STACK_GLOBAL, NEWOBJ
        b"cjms_evil_mod\nThing\n)\x81.",  # GLOBAL, as protocol 0 writes it
    ],
)
def test_refusal_does_not_even_import_the_module(tmp_path, monkeypatch, data):
    marker = tmp_path / "imported"
    (tmp_path / "jms_evil_mod.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nclass Thing:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "jms_evil_mod", raising=False)
    message = ObjectMessage()
    message._set_serialized_object(data)
    with pytest.raises(MessageFormatException, match="jms_evil_mod"):
        message.get_object()
    assert not marker.exists()
    assert "jms_evil_mod" not in sys.modules


@pytest.mark.parametrize("constructor", [bytes, bytearray])
def test_a_pickle_asking_for_a_terabyte_is_refused_quickly(constructor):
    message = ObjectMessage(AsksForBytes(constructor))
    assert len(message.get_serialized_object()) < 100
    started = time.monotonic()
    with pytest.raises(MessageFormatException, match="size"):
        message.get_object()
    assert time.monotonic() - started < 1.0
    assert message.is_body_assignable_to(object) is False


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage",
        b"\x80\x05",  # truncated
        b"\x80\x04P1\n.",  # a persistent id
        pickle.dumps([1, 2])[:-1],  # no STOP
        b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93\x8c\x011\x85R.",  # eval("1")
        b"\x80\x04\x8c\x08builtins\x8c\x0dbytes.fromhex\x93\x8c\x0200\x85R.",  # an attribute path
    ],
)
def test_broken_or_hostile_data_is_a_format_error(data):
    message = ObjectMessage()
    message._set_serialized_object(data)
    with pytest.raises(MessageFormatException):
        message.get_object()


def test_unpicklable_object_is_refused_at_set_and_keeps_the_old_body():
    message = ObjectMessage([1])
    for bad in (lambda: None, threading.Lock()):
        with pytest.raises(MessageFormatException):
            message.set_object(bad)
    assert message.get_object() == [1]


def test_allow_list_is_configurable_per_message():
    message = ObjectMessage(Point(1, 2), allowed_classes=[Point])
    assert message.get_object() == Point(1, 2)
    by_name = ObjectMessage(Point(3, 4), allowed_classes=[f"{__name__}.Point"])
    assert by_name.get_object() == Point(3, 4)
    later = ObjectMessage(Point(5, 6))
    with pytest.raises(MessageFormatException):
        later.get_object()
    later.set_allowed_classes([Point])
    assert later.get_object() == Point(5, 6)
    assert f"{__name__}.Point" in later.get_allowed_classes()


def test_allow_list_can_replace_the_defaults():
    message = ObjectMessage([datetime.date(2024, 1, 1)])
    message.set_allowed_classes([Point], replace=True)
    with pytest.raises(MessageFormatException, match="datetime"):
        message.get_object()
    assert ObjectMessage([1, "x"], allowed_classes=[]).get_object() == [1, "x"]


def test_allowing_a_class_does_not_allow_its_module():
    message = ObjectMessage(RunsOnLoad(), allowed_classes=[Point])
    with pytest.raises(MessageFormatException, match="_record"):
        message.get_object()


def test_allow_list_travels_with_a_copy():
    message = ObjectMessage(Point(1, 2), allowed_classes=[Point])
    assert message._copy().get_object() == Point(1, 2)


def test_bad_allow_list_entry_is_a_type_error():
    with pytest.raises(TypeError):
        ObjectMessage(allowed_classes=[5])


def test_clear_body_removes_the_object():
    message = ObjectMessage([1])
    message.clear_body()
    assert message.get_object() is None
    message.set_object("again")
    assert message.get_object() == "again"
