"""What crosses from the broker to a consumer (``Delivery``) and back from a browse (``BrowsePage``,
or ``EncodedBrowsePage`` for a range read that ships the messages as codec bytes).

Both are small immutable values. A delivery's message is a copy made for that one consumer, with
``JMSRedelivered`` and ``JMSXDeliveryCount`` set (``delivered_copy``) — except for a consumer that
only reads what it is delivered (``ConsumerSpec.read_only_messages``, a STOMP server writing
MESSAGE frames), which is handed the broker's own message, unchanged, and takes the count from the
delivery's ``delivery_count``; its ``tag`` is how the client later acknowledges
or requeues it; ``recorded`` is the store batch that records the delivery, which whoever hands the
message to an application (the client session, a STOMP server writing a MESSAGE frame) must wait
for first — never under the broker's lock. Nothing here refers to broker internals, so a network
transport can rebuild these values from frames on the other side (where ``recorded`` is ``DONE``:
the server waited).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from jms.message import Message
from jms.store import DONE, Completion
from jms.types import Int

__all__ = [
    "DEFAULT_BROWSE_PAGE",
    "DELIVERY_COUNT",
    "BrowsePage",
    "Delivery",
    "EncodedBrowsePage",
    "delivered_copy",
]

#: Messages per browse page unless asked otherwise.
DEFAULT_BROWSE_PAGE = 500
#: The property a delivery's count travels in.
DELIVERY_COUNT = "JMSXDeliveryCount"
# JMSXDeliveryCount of nearly every delivery; an Int is immutable, so all of them may share it.
_FIRST_DELIVERY_COUNT = Int(1)


def delivered_copy(message: Message, delivery_count: int) -> Message:
    """A copy of ``message`` for one delivery, its ``delivery_count``-th: with that
    JMSXDeliveryCount, and JMSRedelivered when it is above 1."""
    copy = message._copy()
    copy._properties[DELIVERY_COUNT] = (
        _FIRST_DELIVERY_COUNT if delivery_count == 1 else Int(delivery_count)
    )
    copy._redelivered = delivery_count > 1
    return copy


class Delivery(NamedTuple):
    """One message handed to one consumer; ``seq`` is its sequence number in its destination.

    ``recorded.wait()`` must return before the application sees ``message``: until then a crash
    could lose the record that it was delivered (or the number ``seq`` itself).
    ``delivery_count`` is this delivery's JMSXDeliveryCount (1 for the first), which ``message``
    carries too unless it is the broker's own (see the module docstring). A named tuple, not a
    frozen dataclass: one is made per delivery, and it is built several times faster."""

    consumer_id: int
    tag: int
    seq: int
    message: Message
    recorded: Completion = DONE
    delivery_count: int = 1


@dataclass(frozen=True, slots=True)
class BrowsePage:
    """Messages present in a queue or subscription, as ``(seq, message)`` in sequence order.

    ``next_seq`` is where the next page starts, or ``None`` when this page reached the end.
    """

    messages: tuple[tuple[int, Message], ...]
    next_seq: int | None


class EncodedBrowsePage(NamedTuple):
    """The page a browse would return, each message as its ``jms.message.codec`` encoding:
    ``messages[i]`` (numbered ``seqs[i]``) encodes exactly the message ``BrowsePage`` would hold,
    JMSRedelivered included. ``next_seq`` is where the next page starts, or ``None`` when this
    page reached the end. The lists are the receiver's."""

    seqs: list[int]
    messages: list[bytes]
    next_seq: int | None
