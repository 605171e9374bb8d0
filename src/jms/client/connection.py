"""``Connection``: one client's link to a broker — its client ID, its sessions, and whether
messages are being delivered (``start``/``stop``).

A connection is thread-safe (its methods may be called from any thread) and starts stopped:
consumers buffer what the broker sends, but nothing reaches ``receive`` or a listener until
``start()``. ``stop()`` pauses delivery and waits for running listeners; ``close()`` closes every
session (redelivering what they did not acknowledge), deletes the connection's temporary
destinations and releases its client ID. Neither may be called from one of the connection's own
listeners (JMS: that would deadlock), which raises ``IllegalStateException``. The connection never
dispatches messages itself; sessions do.
"""

from __future__ import annotations

import itertools
import re
import threading
import uuid
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TypeVar

from jms.client.options import ClientOptions
from jms.client.session import Session
from jms.client.transport import Transport
from jms.errors import IllegalStateException, JMSException
from jms.message import TemporaryQueue, TemporaryTopic

__all__ = ["Connection", "ConnectionMetaData", "ExceptionListener"]

#: Called with the error when the broker closes a connection the application did not close.
ExceptionListener = Callable[[JMSException], object]

_Temporary = TypeVar("_Temporary", TemporaryQueue, TemporaryTopic)

_SESSION_MODES = {
    Session.SESSION_TRANSACTED: "SESSION_TRANSACTED",
    Session.AUTO_ACKNOWLEDGE: "AUTO_ACKNOWLEDGE",
    Session.CLIENT_ACKNOWLEDGE: "CLIENT_ACKNOWLEDGE",
    Session.DUPS_OK_ACKNOWLEDGE: "DUPS_OK_ACKNOWLEDGE",
}


class ConnectionMetaData:
    """What this provider implements (JMS ``ConnectionMetaData``)."""

    def get_jms_version(self) -> str:
        return "3.1"

    def get_jms_major_version(self) -> int:
        return 3

    def get_jms_minor_version(self) -> int:
        return 1

    def get_jms_provider_name(self) -> str:
        return "jms (Python)"

    def get_provider_version(self) -> str:
        try:
            return version("jms")
        except PackageNotFoundError:
            return "unknown"

    def get_provider_major_version(self) -> int:
        """The first number of ``get_provider_version()`` (0 when it is unknown)."""
        return self._provider_version_part(0)

    def get_provider_minor_version(self) -> int:
        """The second number of ``get_provider_version()`` (0 when it is unknown)."""
        return self._provider_version_part(1)

    def _provider_version_part(self, index: int) -> int:
        parts = re.findall(r"\d+", self.get_provider_version())
        return int(parts[index]) if len(parts) > index else 0

    def get_jmsx_property_names(self) -> list[str]:
        """The JMSX properties this provider supports."""
        return ["JMSXDeliveryCount", "JMSXGroupID", "JMSXGroupSeq"]


class Connection:
    """See the module docstring. Created by ``ConnectionFactory.create_connection``."""

    def __init__(
        self,
        open_transport: Callable[[Callable[[JMSException], None], Callable[[], None]], Transport],
        options: ClientOptions,
    ) -> None:
        self._options = options
        self._lock = threading.RLock()
        self._sessions: list[Session] = []
        self._started = False
        # As for sessions: closing lets running listeners finish using the connection.
        self._closing = False
        self._closed = False
        self._lost: JMSException | None = None
        self._exception_listener: ExceptionListener | None = None
        self._client_id = options.client_id
        self._used = False
        self._message_ids = itertools.count(1)
        self._message_id_prefix = f"ID:{uuid.uuid4().hex}:"
        self._transport = open_transport(self._on_lost, self._on_interrupted)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "started" if self._started else "stopped"
        return f"<Connection client_id={self._client_id!r} {state}>"

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- JMS API -------------------------------------------------------------------------------

    def get_client_id(self) -> str | None:
        self._check_open()
        return self._client_id

    def set_client_id(self, client_id: str) -> None:
        """Set the client ID; only right after the connection was created, and only if the
        factory did not set one (``InvalidClientIDException`` if another connection has it)."""
        with self._lock:
            self._check_open()
            if self._options.client_id is not None:
                raise IllegalStateException(
                    f"this connection's client ID {self._client_id!r} was set by its "
                    "ConnectionFactory (client_id option) and cannot be changed"
                )
            if self._client_id is not None:
                raise IllegalStateException(
                    f"this connection already has client ID {self._client_id!r}"
                )
            if self._used:
                raise IllegalStateException(
                    "set_client_id must be called right after the connection is created, before "
                    "it creates sessions or is started"
                )
            self._transport.set_client_id(client_id)
            self._client_id = client_id

    def create_session(
        self, transacted: bool | int = False, acknowledge_mode: int = Session.AUTO_ACKNOWLEDGE
    ) -> Session:
        """``create_session(transacted, acknowledge_mode)``; also ``create_session(session_mode)``
        with one of the ``Session`` constants, as JMS 2.0 allows. A transacted session ignores
        ``acknowledge_mode``; a non-transacted one takes AUTO, CLIENT or DUPS_OK only (the
        javadoc of ``createSession(boolean, int)``: "The permitted values are
        Session.CLIENT_ACKNOWLEDGE, Session.AUTO_ACKNOWLEDGE and Session.DUPS_OK_ACKNOWLEDGE")."""
        if type(transacted) is int:
            mode = transacted
        elif transacted:
            mode = Session.SESSION_TRANSACTED
        else:
            mode = acknowledge_mode
            if type(mode) is int and mode == Session.SESSION_TRANSACTED:
                raise JMSException(
                    "create_session(False, Session.SESSION_TRANSACTED): a non-transacted session "
                    "takes Session.AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE or DUPS_OK_ACKNOWLEDGE; "
                    "for a transacted one pass True"
                )
        if type(mode) is not int or mode not in _SESSION_MODES:
            raise JMSException(
                f"invalid session mode {mode!r}; expected one of "
                + ", ".join(f"Session.{name} ({value})" for value, name in _SESSION_MODES.items())
            )
        with self._lock:
            self._check_open()
            if self._closing:
                raise IllegalStateException("this Connection is closing")
            self._used = True
            session = Session(self, mode)
            self._sessions.append(session)
            return session

    def start(self) -> None:
        """Start (or resume) delivering messages to receivers and listeners."""
        with self._lock:
            self._check_open()
            self._used = True
            self._started = True
            sessions = list(self._sessions)
        for session in sessions:
            session._wake()

    def stop(self) -> None:
        """Pause delivery; returns once no listener of this connection is running."""
        with self._lock:
            self._check_open()
            self._check_not_in_listener("stop")
            self._used = True
            self._started = False
            sessions = list(self._sessions)
        for session in sessions:
            session._wait_for_listener()

    def close(self) -> None:
        """Close every session, then the connection itself. Listeners running meanwhile may
        use the connection and their sessions until they return; so do the completion listeners
        of asynchronous sends, which close waits for. Idempotent."""
        for session in list(self._sessions):
            session._completions.wait("close")
        with self._lock:
            if self._closing:
                return
            self._check_not_in_listener("close")
            self._closing = True
            sessions = list(self._sessions)
        for session in sessions:
            session._stop_delivery()
        self._closed = True
        for session in sessions:
            session._release()
        if self._lost is None:
            self._transport.close()

    def get_meta_data(self) -> ConnectionMetaData:
        self._check_open()
        return ConnectionMetaData()

    def get_exception_listener(self) -> ExceptionListener | None:
        self._check_open()
        return self._exception_listener

    def set_exception_listener(self, listener: ExceptionListener | None) -> None:
        """Be told (on the broker's thread) when the broker closes this connection."""
        self._check_open()
        self._exception_listener = listener

    # -- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateException("this Connection is closed")
        if self._lost is not None:
            raise IllegalStateException(
                f"this Connection was closed by the broker: {self._lost.reason}"
            )

    def _check_not_in_listener(self, action: str) -> None:
        current = threading.current_thread()
        if any(session._listener_thread is current for session in self._sessions):
            raise IllegalStateException(
                f"a message listener must not {action} its own connection (it would deadlock); "
                "do it from another thread"
            )

    def _on_lost(self, error: JMSException) -> None:
        self._lost = error
        for session in list(self._sessions):
            session._wake()
        listener = self._exception_listener
        if listener is not None:
            listener(error)

    def _on_interrupted(self) -> None:
        """The transport lost its broker and is failing over: what the sessions hold from it
        comes back from the broker it reaches next."""
        for session in list(self._sessions):
            session._drop_buffered()

    def _forget_session(self, session: Session) -> None:
        with self._lock:
            if session in self._sessions:
                self._sessions.remove(session)

    def _next_message_id(self) -> str:
        return f"{self._message_id_prefix}{next(self._message_ids)}"

    def _temporary(self, destination: _Temporary) -> _Temporary:
        """The application's handle on a new temporary destination, with ``delete()`` wired."""

        def delete() -> None:
            self._check_open()
            self._transport.delete_temporary_destination(destination)

        return type(destination)(destination.name, delete)
