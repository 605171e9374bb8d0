"""Destinations: the values of JMSDestination and JMSReplyTo."""

from __future__ import annotations

import pytest

from jms import (
    Destination,
    IllegalStateException,
    InvalidDestinationException,
    Queue,
    TemporaryQueue,
    TemporaryTopic,
    Topic,
)


def test_queue_and_topic_names():
    assert Queue("orders").get_queue_name() == "orders"
    assert Topic("prices").get_topic_name() == "prices"
    assert TemporaryQueue("tmp-1").get_queue_name() == "tmp-1"
    assert TemporaryTopic("tmp-2").get_topic_name() == "tmp-2"
    assert Queue("orders").name == "orders"


def test_temporary_destinations_are_queues_and_topics():
    # TemporaryQueue extends Queue, TemporaryTopic extends Topic: JMSReplyTo "may be either a
    # Queue object or a Topic object".
    assert isinstance(TemporaryQueue("t"), Queue) and isinstance(TemporaryQueue("t"), Destination)
    assert isinstance(TemporaryTopic("t"), Topic)
    assert not isinstance(TemporaryQueue("t"), Topic)
    assert TemporaryQueue("t").is_temporary and not Queue("t").is_temporary
    assert Queue("q").is_queue and TemporaryQueue("q").is_queue and not Topic("q").is_queue


def test_equality_is_by_kind_and_name():
    assert Queue("a") == Queue("a") and hash(Queue("a")) == hash(Queue("a"))
    assert Queue("a") != Queue("b")
    assert Queue("a") != Topic("a")
    assert Queue("a") != TemporaryQueue("a")
    assert Topic("a") != TemporaryTopic("a")
    assert Queue("a") != "queue://a"
    assert len({Queue("a"), Queue("a"), Topic("a"), TemporaryQueue("a")}) == 3


@pytest.mark.parametrize(
    ("destination", "text"),
    [
        (Queue("orders"), "queue://orders"),
        (Topic("prices.eu"), "topic://prices.eu"),
        (TemporaryQueue("ID:1"), "temp-queue://ID:1"),
        (TemporaryTopic("x"), "temp-topic://x"),
        (Queue("a://b"), "queue://a://b"),
    ],
)
def test_text_form_round_trips(destination, text):
    assert str(destination) == text
    parsed = Destination.parse(text)
    assert parsed == destination and type(parsed) is type(destination)


def test_to_string_of_queue_and_topic():
    assert Queue("orders").to_string() == "queue://orders"
    assert Topic("t").to_string() == "topic://t"


@pytest.mark.parametrize("text", ["orders", "queue://", "queue:/x", "fifo://x", "", None, 5])
def test_parse_refuses_what_is_not_a_destination(text):
    with pytest.raises(InvalidDestinationException):
        Destination.parse(text)


@pytest.mark.parametrize("cls", [Queue, Topic, TemporaryQueue, TemporaryTopic])
@pytest.mark.parametrize("name", ["", None, 5])
def test_destination_needs_a_name(cls, name):
    with pytest.raises(InvalidDestinationException):
        cls(name)


def test_destinations_are_immutable():
    queue = Queue("a")
    with pytest.raises(AttributeError):
        queue.name = "b"
    with pytest.raises(AttributeError):
        queue.extra = 1


def test_temporary_destination_delete_asks_the_provider():
    calls = []
    queue = TemporaryQueue("t", deleter=lambda: calls.append("deleted"))
    queue.delete()
    assert calls == ["deleted"]


@pytest.mark.parametrize("cls", [TemporaryQueue, TemporaryTopic])
def test_temporary_destination_without_a_provider_cannot_be_deleted(cls):
    with pytest.raises(IllegalStateException):
        cls("t").delete()
