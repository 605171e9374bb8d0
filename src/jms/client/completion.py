"""Asynchronous send (JMS 2.0): ``CompletionListener``, and ``Completions``, a session's sends
whose listeners have not yet run.

``send(..., completion_listener=listener)`` returns once the message is handed to the transport;
the transport reports the outcome (None, or the exception the broker answered) once the broker
has the message — for a PERSISTENT one, durably — on whatever thread it learns it. The listeners
then run on the session's completion thread, one at a time and strictly in the order the session
sent: a send's listener runs only after every earlier send's has returned, so the completions of
one producer arrive in send order whatever order the transport reports them in. ``wait`` blocks
until every listener has returned (``close`` and ``commit`` call it); on the completion thread
itself it raises ``IllegalStateException``, as JMS requires of a CompletionListener calling close,
commit or rollback on its own producer, session or connection.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from jms.errors import IllegalStateException
from jms.message import Message

__all__ = ["CompletionListener", "Completions", "check_completion_listener"]

logger = logging.getLogger(__name__)


@runtime_checkable
class CompletionListener(Protocol):
    """What an asynchronous send calls, once per message, when the send has completed: any
    object with these two methods (or a subclass of this class that defines them)."""

    def on_completion(self, message: Message) -> None:
        """The broker has ``message`` (durably, when it is PERSISTENT)."""

    def on_exception(self, message: Message, exception: Exception) -> None:
        """The send of ``message`` failed with ``exception``."""


def check_completion_listener(
    listener: CompletionListener | None, where: str
) -> CompletionListener | None:
    """``listener`` when it is None or has both methods, else ``TypeError`` naming ``where``."""
    if listener is not None and not isinstance(listener, CompletionListener):
        raise TypeError(
            f"{where} takes None or an object with on_completion(message) and "
            f"on_exception(message, exception) methods; got {listener!r}"
        )
    return listener


@dataclass(slots=True, eq=False)
class _Send:
    listener: CompletionListener
    message: Message
    done: bool = False
    error: Exception | None = None


class Completions:
    """One session's asynchronous sends, in send order, until their listeners have returned."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._condition = threading.Condition(threading.Lock())
        self._sends: deque[_Send] = deque()
        # Runs while sends are outstanding; it ends when none is, and a later send starts another.
        self._thread: threading.Thread | None = None

    def add(self, listener: CompletionListener, message: Message) -> _Send:
        """Record a send about to be handed to the transport; its outcome goes to ``finish``."""
        send = _Send(listener, message)
        with self._condition:
            self._sends.append(send)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"jms-completions-{self._name}", daemon=True
                )
                self._thread.start()
        return send

    def finish(self, send: _Send, error: Exception | None) -> None:
        """The transport's report for ``send``: None when the broker has it, else the error."""
        with self._condition:
            send.done = True
            send.error = error
            self._condition.notify_all()

    def discard(self, send: _Send) -> None:
        """``send`` raised in the caller's thread before the transport took it: no listener."""
        with self._condition:
            self._sends.remove(send)
            self._condition.notify_all()

    def wait(self, operation: str) -> None:
        """Block until every listener of an earlier send has returned; ``operation`` (close,
        commit, rollback) names the call for the error a listener calling it gets."""
        if threading.current_thread() is self._thread:
            raise IllegalStateException(
                f"a CompletionListener must not call {operation}() on its own producer, session "
                "or connection"
            )
        with self._condition:
            while self._sends:
                self._condition.wait()

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._sends and not self._sends[0].done:
                    self._condition.wait()
                if not self._sends:
                    self._thread = None
                    return
                send = self._sends[0]
            try:
                if send.error is None:
                    send.listener.on_completion(send.message)
                else:
                    send.listener.on_exception(send.message, send.error)
            except Exception:
                logger.exception("completion listener %r raised", send.listener)
            finally:
                with self._condition:
                    self._sends.popleft()
                    self._condition.notify_all()
