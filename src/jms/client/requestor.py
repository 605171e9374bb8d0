"""``Requestor``: request/reply over JMS with ``JMSReplyTo`` and ``JMSCorrelationID``.

The requestor owns a temporary queue for replies. ``request`` stamps the request with
``JMSReplyTo`` = that queue, sends it, and waits for the reply whose ``JMSCorrelationID`` is the
request's ``JMSMessageID`` (late replies to earlier, timed-out requests are dropped). The
responder's side is ``Requestor.reply``: it sets that correlation ID and sends to the request's
``JMSReplyTo``. A requestor never consumes anything but its own reply queue. The session must not be transacted (the request would wait for a commit that
cannot come) and its connection must be started to receive replies.
"""

from __future__ import annotations

import time

from jms.client.session import Session
from jms.errors import IllegalStateException, InvalidDestinationException
from jms.message import Destination, Message

__all__ = ["Requestor"]


class Requestor:
    """Sends requests to ``destination`` and waits for their replies."""

    def __init__(self, session: Session, destination: Destination) -> None:
        if not isinstance(destination, Destination):
            raise InvalidDestinationException(
                f"a Requestor sends to a Queue or a Topic; got {destination!r}"
            )
        if session.get_transacted():
            raise IllegalStateException(
                "a Requestor needs a non-transacted session: in a transacted one the request "
                "would not be sent before commit, so no reply could come"
            )
        self._session = session
        self._reply_queue = session.create_temporary_queue()
        self._producer = session.create_producer(destination)
        self._consumer = session.create_consumer(self._reply_queue)

    def __enter__(self) -> Requestor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, message: Message, timeout_ms: int | None = None) -> Message | None:
        """Send ``message`` and return its reply, or None if none came within ``timeout_ms``
        (None: wait as long as it takes)."""
        message.set_jms_reply_to(self._reply_queue)
        self._producer.send(message)
        request_id = message.get_jms_message_id()
        deadline = None if not timeout_ms else time.monotonic() + timeout_ms / 1000
        while True:
            remaining = None
            if deadline is not None:
                remaining = max(1, int((deadline - time.monotonic()) * 1000))
            reply = self._consumer.receive(remaining)
            if reply is None:
                return None
            if reply.get_jms_correlation_id() == request_id:
                return reply
            if deadline is not None and time.monotonic() >= deadline:
                return None

    @staticmethod
    def reply(session: Session, request: Message, response: Message) -> None:
        """Send ``response`` to ``request``'s ``JMSReplyTo``, correlated to the request."""
        reply_to = request.get_jms_reply_to()
        if reply_to is None:
            raise InvalidDestinationException(
                f"request {request.get_jms_message_id()!r} has no JMSReplyTo to answer to"
            )
        response.set_jms_correlation_id(request.get_jms_message_id())
        producer = session.create_producer(None)
        try:
            producer.send(reply_to, response)
        finally:
            producer.close()

    def close(self) -> None:
        """Close the reply consumer, delete the reply queue and close the session, as JMS's
        ``QueueRequestor.close()`` does: "Note that this method closes the QueueSession object
        passed to the QueueRequestor constructor"."""
        self._consumer.close()
        self._producer.close()
        self._reply_queue.delete()
        self._session.close()
