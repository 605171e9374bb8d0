"""``AdminClient``: the administrative requests a ``jms broker`` answers over STOMP.

A request is a SEND to ``/admin/<command>`` with ``reply-to`` naming a temporary queue of the
same connection; the broker answers there with a JSON text message carrying the request's
``correlation-id``. ``stats()`` returns every queue and subscription the user may administer
(depth, in flight, consumers, counters) with the broker's totals; ``purge(queue)`` removes every
message of a queue not currently delivered to a consumer and returns how many. Both need the
``admin`` permission. ``last_sequence(queue)`` (browse permission) is answered in the RECEIPT.
This module only asks; the broker decides and answers.
"""

from __future__ import annotations

import itertools
import json
import queue
from typing import Any, Final

from jms.errors import JMSException
from jms.stomp.client import StompClient
from jms.stomp.frames import Frame

__all__ = ["AdminClient"]

_REPLIES: Final = "/temp-queue/jms-admin"


class AdminClient:
    """One connection for admin requests to the broker at ``host:port``; a context manager."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        user: str | None = None,
        password: str | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        self._timeout_s = timeout_s
        self._replies: queue.SimpleQueue[Frame] = queue.SimpleQueue()
        self._ids = itertools.count(1)
        self._client = StompClient(
            host,
            port,
            login=user,
            passcode=password,
            connect_timeout_s=timeout_s,
            on_message=self._replies.put,
        )
        self._client.request(
            Frame("SUBSCRIBE", (("id", "jms-admin"), ("destination", _REPLIES), ("ack", "auto")))
        )

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def request(self, command: str, headers: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
        """Send ``/admin/<command>`` and return the broker's JSON answer."""
        correlation = f"admin-{next(self._ids)}"
        self._client.request(
            Frame(
                "SEND",
                (
                    ("destination", f"/admin/{command}"),
                    ("reply-to", _REPLIES),
                    ("correlation-id", correlation),
                    *headers,
                ),
            )
        )
        while True:
            try:
                frame = self._replies.get(timeout=self._timeout_s)
            except queue.Empty:
                lost = self._client.lost
                raise JMSException(
                    f"{self._client.where} did not answer /admin/{command} within "
                    f"{self._timeout_s:g} s" + (f": {lost.reason}" if lost else "")
                ) from None
            if frame.header("correlation-id") == correlation:
                return json.loads(frame.body.decode("utf-8"))

    def stats(self) -> dict[str, Any]:
        """The broker's totals and a list of ``destinations`` (one dict per queue or
        subscription: name, destination, depth, in_flight, consumers, enqueued, acknowledged,
        expired, dead_lettered)."""
        return self.request("stats")

    def last_sequence(self, queue_name: str) -> int:
        """The sequence number of the last message sent to queue ``queue_name``, 0 if none ever
        was; needs the browse permission."""
        target = f"/queue/{queue_name}"
        receipt = self._client.request(
            Frame("SEND", (("destination", "/admin/last-sequence"), ("target", target)))
        )
        return int(receipt.header("jms-last-seq") or 0)

    def purge(self, queue_name: str) -> int:
        """Remove every message of queue ``queue_name`` not delivered right now; how many."""
        return int(self.request("purge", (("target", f"/queue/{queue_name}"),))["purged"])
