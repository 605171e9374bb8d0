"""``MessageConsumer``: receives messages synchronously (``receive``) or through a listener.

Deliveries arrive in a bounded prefetch buffer (the broker sends at most ``prefetch`` ahead of
what the application took), ordered by priority and guarded by the session's condition; ``receive`` takes from it while
the connection is started, and the session's listener thread does the same for consumers with a
listener. Each taken message is handed to the session, which makes it read-only, installs the
acknowledgement, and acknowledges it as the session's mode says. Iterating a consumer receives
until the consumer (or its session or connection) is closed. A consumer never talks to the
transport about another consumer's messages.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from jms.broker import ConsumerSpec, Delivery
from jms.errors import IllegalStateException, MessageFormatException
from jms.message import Message

if TYPE_CHECKING:
    from jms.client.session import Session

__all__ = ["MessageConsumer", "MessageListener"]

#: A message listener: called on the session's thread with each message.
MessageListener = Callable[[Message], Any]


class _PrefetchBuffer:
    """Deliveries held for the application: highest ``JMSPriority`` first, FIFO within one — so
    priority holds inside the prefetch window too, not only in the broker's backlog."""

    __slots__ = ("_count", "_lanes")

    def __init__(self) -> None:
        self._lanes: list[deque[Delivery]] = [deque() for _ in range(10)]
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, delivery: Delivery) -> None:
        self._lanes[delivery.message.get_jms_priority()].append(delivery)
        self._count += 1

    def appendleft(self, delivery: Delivery) -> None:
        """Put back the delivery ``popleft`` just returned, so that it is taken next again."""
        self._lanes[delivery.message.get_jms_priority()].appendleft(delivery)
        self._count += 1

    def popleft(self) -> Delivery:
        for lane in reversed(self._lanes):
            if lane:
                self._count -= 1
                return lane.popleft()
        raise IndexError("pop from an empty prefetch buffer")

    def take_all(self) -> list[Delivery]:
        """Everything held, in the order it would have been taken; the buffer is left empty."""
        taken = [delivery for lane in reversed(self._lanes) for delivery in lane]
        for lane in self._lanes:
            lane.clear()
        self._count = 0
        return taken


class MessageConsumer:
    """Receives from one queue or topic subscription; see the module docstring."""

    def __init__(self, session: Session, spec: ConsumerSpec) -> None:
        self._session = session
        self._spec = spec
        self._buffer = _PrefetchBuffer()
        self._listener: MessageListener | None = None
        self._closed = False
        self._uncredited = 0
        # Credit goes back in batches (half the window), so a busy consumer costs one credit call
        # per prefetch/2 messages while the broker never sees its window run dry.
        self._credit_batch = max(1, spec.prefetch // 2)
        self._id = session._transport.add_consumer(spec, self._sink)

    def __repr__(self) -> str:
        return f"<MessageConsumer on {self._spec.destination}>"

    def __enter__(self) -> MessageConsumer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[Message]:
        """Receive message after message; the iteration ends when the consumer is closed."""
        while True:
            message = self.receive()
            if message is None:
                return
            yield message

    # -- JMS API -------------------------------------------------------------------------------

    def get_message_selector(self) -> str | None:
        self._check_open()
        return self._spec.selector_text

    def get_message_listener(self) -> MessageListener | None:
        self._check_open()
        return self._listener

    def set_message_listener(self, listener: MessageListener | None) -> None:
        """Deliver this consumer's messages to ``listener`` on the session's thread (None stops)."""
        self._check_open()
        if listener is not None and not callable(listener):
            raise TypeError(f"a message listener is a callable taking a Message; got {listener!r}")
        with self._session._condition:
            self._listener = listener
            self._session._condition.notify_all()
        if listener is not None:
            self._session._ensure_listener_thread()

    def receive(self, timeout_ms: int | None = None) -> Message | None:
        """The next message; waits up to ``timeout_ms`` ms (None or 0: as long as it takes).
        Returns None on timeout or when the consumer is closed meanwhile."""
        return self._receive(self._deadline(timeout_ms), wait=True, transform=None)

    def receive_no_wait(self) -> Message | None:
        """The next message if one is here now, else None."""
        return self._receive(None, wait=False, transform=None)

    def close(self) -> None:
        """Stop receiving. Messages this consumer delivered stay acknowledgeable by the session;
        messages it held but never delivered go back to the broker. A listener may close its
        own consumer; from another thread, close waits for a running listener to finish."""
        if self._closed:
            return
        session = self._session
        with session._condition:
            if threading.current_thread() is not session._listener_thread:
                while session._running is self:
                    session._condition.wait()
        undelivered = self._detach()
        if undelivered:
            session._transport.requeue(undelivered=undelivered)
        session._forget_consumer(self)

    # -- internals used by the session ---------------------------------------------------------

    def _sink(self, delivery: Delivery) -> None:
        # Called by the transport, possibly under the broker's lock: append and wake, nothing else.
        condition = self._session._condition
        with condition:
            self._buffer.append(delivery)
            condition.notify_all()

    def _detach(self) -> list[int]:
        """Stop deliveries and return the tags of those still buffered (never delivered)."""
        with self._session._condition:
            self._closed = True
            self._listener = None
            self._session._condition.notify_all()
        if not self._session._connection._lost:
            self._session._transport.remove_consumer(self._id)
        return self._drain()

    def _drain(self) -> list[int]:
        with self._session._condition:
            return [delivery.tag for delivery in self._buffer.take_all()]

    def _put_back(self, delivery: Delivery) -> None:
        """Hold ``delivery`` again as the next one to take, as if it had never been taken."""
        with self._session._condition:
            self._buffer.appendleft(delivery)
            self._uncredited -= 1  # taking it again must not count twice toward credit
            self._session._condition.notify_all()

    def _took_one(self) -> None:
        self._uncredited += 1
        if self._uncredited >= self._credit_batch:
            count, self._uncredited = self._uncredited, 0
            self._session._transport.credit(self._id, count)

    def _receive(
        self,
        deadline: float | None,
        wait: bool,
        transform: Callable[[Message], Any] | None,
    ) -> Any:
        self._check_open()
        if self._listener is not None:
            raise IllegalStateException(
                "this consumer has a message listener; receive() cannot be used with it"
            )
        session = self._session
        while True:
            if session._lazy_acks_pending() and not self._buffer:
                session._flush_lazy_acks()
            delivery = self._take(deadline, wait)
            if delivery is None:
                return None
            message = session._accept(self, delivery)
            if message is None:
                continue  # expired while waiting in the buffer
            result: Any = message
            if transform is not None:
                try:
                    result = transform(message)
                except MessageFormatException:
                    session._unreceive(self, delivery)
                    raise
            session._settle(delivery.tag)
            return result

    def _take(self, deadline: float | None, wait: bool) -> Delivery | None:
        session = self._session
        condition = session._condition
        with condition:
            while True:
                if self._closed or session._closing or session._connection._lost is not None:
                    return None
                if session._connection._started and self._buffer:
                    return self._buffer.popleft()
                if not wait:
                    return None
                if deadline is None:
                    condition.wait()
                else:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    condition.wait(remaining)

    @staticmethod
    def _deadline(timeout_ms: int | None) -> float | None:
        if timeout_ms is None or timeout_ms == 0:
            return None
        if not isinstance(timeout_ms, int | float) or timeout_ms < 0:
            raise ValueError(f"timeout_ms must be None or a number of ms >= 0; got {timeout_ms!r}")
        return time.monotonic() + timeout_ms / 1000

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException(
                f"this MessageConsumer on {self._spec.destination} is closed"
            )
        self._session._check_open()
