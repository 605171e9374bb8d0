"""Messages at the broker's frame body limit (``FrameLimits.max_body_bytes``, 10 MiB) over STOMP:
one that fits is sent, received and range-read (a packed range read's frame holds it and its
record head); one that does not is refused by the client before it is written, with the sizes —
the broker would otherwise end the connection mid-write, and the client could only say the
connection was reset."""

from __future__ import annotations

import pytest

from jms.client import Connection, Session
from jms.errors import ResourceAllocationException
from jms.message import BytesMessage, Queue
from jms.message.codec import encode
from jms.stomp.parser import FrameLimits

LIMIT = FrameLimits().max_body_bytes


def _message_encoding_to(session: Session, queue: Queue, size: int) -> BytesMessage:
    """A BytesMessage whose encoding, as sent to ``queue``, is ``size`` bytes."""
    probe = BytesMessage()
    probe.write_bytes(b"\0")
    session.create_producer(queue).send(probe)  # stamps what every send stamps
    stamped = len(encode(probe)) - 1
    message = BytesMessage()
    message.write_bytes(b"x" * (size - stamped))
    return message


def test_a_message_of_the_largest_body_is_sent_received_and_range_read(
    connection: Connection, session: Session
) -> None:
    queue = Queue("largest")
    largest = _message_encoding_to(session, queue, LIMIT)
    body_size = len(largest.get_body(bytes))
    producer = session.create_producer(queue)
    producer.send(largest)
    assert len(encode(largest)) == LIMIT
    reader = session.create_sequence_reader(queue)
    pages = list(reader.read_encoded(1, None, 10))
    assert [len(data) for page in pages for data in page.messages][-1] == LIMIT
    (_, (_, read)) = next(iter(reader.read(1, None, 10)))
    assert len(read.get_body(bytes)) == body_size
    connection.start()
    consumer = session.create_consumer(queue)
    assert consumer.receive(5.0) is not None  # the probe
    received = consumer.receive(5.0)
    assert isinstance(received, BytesMessage)
    assert len(received.get_body(bytes)) == body_size


def test_a_message_past_the_limit_is_refused_before_it_is_sent(session: Session) -> None:
    queue = Queue("too-large")
    too_large = _message_encoding_to(session, queue, LIMIT + 1)
    producer = session.create_producer(queue)
    with pytest.raises(ResourceAllocationException, match=f"{LIMIT + 1} bytes.*at most {LIMIT}"):
        producer.send(too_large)
    producer.send(BytesMessage())  # the connection is still good
    reader = session.create_sequence_reader(queue)
    assert len([seq for page in reader.read(1, None, 10) for seq, _ in page]) == 2


def test_a_staged_message_past_the_limit_is_refused_and_nothing_is_staged(
    session: Session,
) -> None:
    staging = Queue("staging")
    small = encode(BytesMessage())
    with pytest.raises(ResourceAllocationException, match="staged message 1 of this request"):
        session.stage_encoded(staging, [small, bytes(LIMIT - 3)])
    reader = session.create_sequence_reader(staging)
    assert reader.last_sequence() == 0
