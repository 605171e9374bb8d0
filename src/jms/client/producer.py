"""``MessageProducer``: sends messages, stamping the header fields JMS says ``send`` sets.

On ``send`` the producer sets, on the caller's own message object: ``JMSDestination``,
``JMSDeliveryMode``, ``JMSPriority``, ``JMSMessageID`` (``ID:`` + unique, or None when
``set_disable_message_id(True)``), ``JMSTimestamp`` (now, or 0 when
``set_disable_message_timestamp(True)``), ``JMSExpiration`` (timestamp + time to live, 0 for
never) and ``JMSDeliveryTime`` (timestamp + delivery delay). The message stays writable; what is
sent is a copy, so changing the message afterwards changes nothing that was sent. A producer never
waits for consumers and never reads messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jms.broker import wall_clock_ms
from jms.client.completion import CompletionListener, check_completion_listener
from jms.errors import IllegalStateException, InvalidDestinationException
from jms.message import DeliveryMode, Destination, Message

if TYPE_CHECKING:
    from jms.client.session import Session

__all__ = ["MessageProducer"]


def _is_int(value: object) -> bool:
    """An int (a ``jms.types`` integer too), not a bool — as the message header setters take."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_delivery_mode(value: object) -> int:
    if not _is_int(value) or value not in (DeliveryMode.NON_PERSISTENT, DeliveryMode.PERSISTENT):
        raise ValueError(
            "delivery mode must be DeliveryMode.NON_PERSISTENT (1) or DeliveryMode.PERSISTENT (2); "
            f"got {value!r}"
        )
    return int(value)  # type: ignore[call-overload]


def check_priority(value: object) -> int:
    if not _is_int(value) or not 0 <= value <= 9:  # type: ignore[operator]
        raise ValueError(f"priority must be an int from 0 to 9; got {value!r}")
    return int(value)  # type: ignore[call-overload]


def check_milliseconds(value: object, what: str) -> int:
    if not _is_int(value) or value < 0:  # type: ignore[operator]
        raise ValueError(f"{what} must be an int of milliseconds, 0 or more; got {value!r}")
    return int(value)  # type: ignore[call-overload]


class MessageProducer:
    """Sends to its destination, or to the one given per send when created without one."""

    def __init__(self, session: Session, destination: Destination | None) -> None:
        if destination is not None and not isinstance(destination, Destination):
            raise InvalidDestinationException(
                f"a producer sends to a Queue, a Topic or None; got {destination!r}"
            )
        self._session = session
        self._destination = destination
        self._delivery_mode: int = DeliveryMode.PERSISTENT
        self._priority = Message.DEFAULT_PRIORITY
        self._time_to_live = Message.DEFAULT_TIME_TO_LIVE
        self._delivery_delay = Message.DEFAULT_DELIVERY_DELAY
        self._disable_message_id = False
        self._disable_message_timestamp = False
        self._closed = False

    def __repr__(self) -> str:
        return f"<MessageProducer to {self._destination}>"

    def __enter__(self) -> MessageProducer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- defaults ------------------------------------------------------------------------------

    def get_destination(self) -> Destination | None:
        self._check_open()
        return self._destination

    def set_delivery_mode(self, delivery_mode: int) -> None:
        self._check_open()
        self._delivery_mode = check_delivery_mode(delivery_mode)

    def get_delivery_mode(self) -> int:
        self._check_open()
        return self._delivery_mode

    def set_priority(self, priority: int) -> None:
        self._check_open()
        self._priority = check_priority(priority)

    def get_priority(self) -> int:
        self._check_open()
        return self._priority

    def set_time_to_live(self, time_to_live: int) -> None:
        self._check_open()
        self._time_to_live = check_milliseconds(time_to_live, "time to live")

    def get_time_to_live(self) -> int:
        self._check_open()
        return self._time_to_live

    def set_delivery_delay(self, delivery_delay: int) -> None:
        self._check_open()
        self._delivery_delay = check_milliseconds(delivery_delay, "delivery delay")

    def get_delivery_delay(self) -> int:
        self._check_open()
        return self._delivery_delay

    def set_disable_message_id(self, value: bool) -> None:
        self._check_open()
        self._disable_message_id = bool(value)

    def get_disable_message_id(self) -> bool:
        self._check_open()
        return self._disable_message_id

    def set_disable_message_timestamp(self, value: bool) -> None:
        self._check_open()
        self._disable_message_timestamp = bool(value)

    def get_disable_message_timestamp(self) -> bool:
        self._check_open()
        return self._disable_message_timestamp

    # -- sending -------------------------------------------------------------------------------

    def send(
        self,
        *destination_and_message: Any,
        delivery_mode: int | None = None,
        priority: int | None = None,
        time_to_live: int | None = None,
        completion_listener: CompletionListener | None = None,
    ) -> None:
        """``send(message, ...)`` to the producer's destination, or ``send(destination, message,
        ...)`` from a producer created without one; keyword arguments override the defaults.

        With ``completion_listener`` the send is asynchronous (JMS 2.0): it returns once the
        message is handed over, and the listener's ``on_completion(message)`` runs when the
        broker has it (durably, for PERSISTENT), or ``on_exception(message, exception)`` when the
        broker refused it — once per message, on the session's completion thread, in send
        order. What is wrong with the call itself still raises here."""
        self._check_open()
        check_completion_listener(completion_listener, "send(completion_listener=...)")
        destination, message = self._parse(destination_and_message)
        mode = self._delivery_mode if delivery_mode is None else check_delivery_mode(delivery_mode)
        level = self._priority if priority is None else check_priority(priority)
        ttl = (
            self._time_to_live
            if time_to_live is None
            else check_milliseconds(time_to_live, "time to live")
        )
        now = wall_clock_ms()
        message.set_jms_destination(destination)
        message.set_jms_delivery_mode(mode)
        message.set_jms_priority(level)
        message.set_jms_timestamp(0 if self._disable_message_timestamp else now)
        message.set_jms_expiration(now + ttl if ttl else 0)
        message.set_jms_delivery_time(now + self._delivery_delay)
        message.set_jms_message_id(
            None if self._disable_message_id else self._session._connection._next_message_id()
        )
        self._session._send(message, completion_listener)

    def _parse(self, arguments: tuple[Any, ...]) -> tuple[Destination, Message]:
        if len(arguments) == 1:
            (message,) = arguments
            if self._destination is None:
                raise InvalidDestinationException(
                    "this producer was created without a destination: use "
                    "send(destination, message)"
                )
            destination = self._destination
        elif len(arguments) == 2:
            destination, message = arguments
            if self._destination is not None:
                raise InvalidDestinationException(
                    f"this producer sends to {self._destination}; send(destination, message) "
                    "needs a producer created with destination None"
                )
            if not isinstance(destination, Destination):
                raise InvalidDestinationException(
                    f"send needs a Queue or Topic destination; got {destination!r}"
                )
        else:
            raise TypeError(
                "send takes (message) or (destination, message), plus keyword arguments; "
                f"got {len(arguments)} positional arguments"
            )
        if not isinstance(message, Message):
            raise TypeError(f"send takes a jms Message, got {type(message).__name__}")
        return destination, message

    # -- lifecycle -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close, once every completion listener of an asynchronous send has returned."""
        if self._closed:
            return
        self._session._completions.wait("close")
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("this MessageProducer is closed")
        self._session._check_open()
