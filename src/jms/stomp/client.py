"""``StompClient``: one blocking STOMP 1.2 client connection, with a reader thread.

It connects (CONNECT, then CONNECTED or ERROR within a timeout), writes frames from any thread
(one lock; ``send`` returns once the bytes are written, ``request`` once the server's RECEIPT
came back), and reads on its own thread: MESSAGE frames go to ``on_message``, RECEIPTs release
their ``request``, and an ERROR, a closed socket or a server silent past its heart-beat promise
end the connection — every waiting ``request`` raises, and ``on_lost`` is told once, unless the
application closed the connection itself. It sends heart-beats while idle. Given an
``ssl_context`` it speaks TLS and verifies the server as that context says (certificate and
host name, by default); a server it cannot verify is refused with the reason. There is no
reconnect: a lost connection stays lost. It never interprets messages or subscriptions: that is
the transport's job above it (``jms.client.stomp_transport``).
"""

from __future__ import annotations

import itertools
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext, suppress
from typing import Any, Final

import jms.errors
from jms.errors import JMSException
from jms.stomp.errors import StompProtocolError
from jms.stomp.frames import Frame, HeartBeat, Role, Version
from jms.stomp.negotiation import HeartBeatOffer, negotiate_heart_beat
from jms.stomp.parser import FrameLimits, FrameParser

__all__ = ["StompClient", "error_from_frame"]

_READ_SIZE: Final = 256 * 1024
_HEART_BEAT_TOLERANCE: Final = 2.0
_TLS_WAIT_S: Final = 1.0  # longest wait for room to write before trying again


def error_from_frame(frame: Frame, where: str) -> Exception:
    """The exception an ERROR frame (or a jms broker's refusing RECEIPT) stands for: the class
    its ``jms-exception`` header names (``JMSException`` or a subclass, ``ValueError``,
    ``TypeError``) or ``JMSException``, with the server's message."""
    body = frame.body.decode("utf-8", "replace").strip()
    message = frame.header("message") or body or "(no message)"
    name = frame.header("jms-exception") or ""
    if not name and body and body not in message:
        # Another broker's reason is often in the body only (RabbitMQ: "Bad CONNECT", then
        # "Virtual host 'localhost' access denied").
        message = f"{message}: {' '.join(body.split())[:300]}"
    if name in ("ValueError", "TypeError"):
        return ValueError(message) if name == "ValueError" else TypeError(message)
    cls = getattr(jms.errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, JMSException)):
        cls = JMSException
    if frame.command == "RECEIPT":
        return cls(message)
    return cls(f"{where} answered ERROR: {message}")


class _Waiter:
    """One request's answer: ``settle`` sets it once, wakes ``request`` and calls ``on_settled``
    (an asynchronous request's callback)."""

    __slots__ = ("error", "event", "frame", "on_settled")

    def __init__(self, on_settled: Callable[[_Waiter], None] | None = None) -> None:
        self.event = threading.Event()
        self.frame: Frame | None = None
        self.error: Exception | None = None
        self.on_settled = on_settled

    def settle(self, frame: Frame | None, error: Exception | None) -> None:
        self.frame = frame
        if self.error is None:
            self.error = error
        self.event.set()
        if self.on_settled is not None:
            self.on_settled(self)

    def failure(self, where: str) -> Exception | None:
        """What the request's answer means as an error: the connection's loss, an ERROR, a
        RECEIPT by which a jms broker refuses it; None for a plain RECEIPT."""
        if self.error is not None:
            return self.error
        assert self.frame is not None
        if self.frame.header("jms-exception") is not None:
            return error_from_frame(self.frame, where)
        return None


class StompClient:
    """A connected STOMP client; see the module docstring."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        login: str | None = None,
        passcode: str | None = None,
        client_id: str | None = None,
        extra_headers: Iterable[tuple[str, str]] = (),
        virtual_host: str = "localhost",
        heart_beat: HeartBeatOffer = HeartBeatOffer(10_000, 10_000),  # noqa: B008 - frozen
        connect_timeout_s: float = 10.0,
        limits: FrameLimits = FrameLimits(),  # noqa: B008 - frozen
        on_message: Callable[[Frame], None] = lambda frame: None,
        on_lost: Callable[[JMSException], None] = lambda error: None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.where = f"stomp{'' if ssl_context is None else '+ssl'}://{host}:{port}"
        self._virtual_host = virtual_host  # CONNECT's host header: RabbitMQ's virtual host
        self._on_message = on_message
        self._on_lost = on_lost
        self._write_lock = threading.Lock()
        self._waiters: dict[str, _Waiter] = {}
        self._waiters_lock = threading.Lock()
        self._receipt_ids = itertools.count(1)
        self._closing = False  # the application is closing: losing the socket is expected
        self._closed = False
        self._lost: JMSException | None = None
        self._parser = FrameParser(Role.SERVER, limits)
        try:
            self._socket = socket.create_connection((host, port), timeout=connect_timeout_s)
        except OSError as error:
            raise JMSException(
                f"cannot connect to {self.where}: {error.strerror or error}", linked_exception=error
            ) from error
        try:
            self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ssl_context is not None:
                self._socket = self._start_tls(ssl_context, host)
            self.connected = self._handshake(
                login, passcode, client_id, extra_headers, heart_beat, connect_timeout_s
            )
        except BaseException:
            self._socket.close()
            raise
        # OpenSSL must not read and write one connection at the same time: over TLS the socket
        # is non-blocking and each read or write holds this lock (never while waiting).
        self._tls_lock: AbstractContextManager[Any] = nullcontext()
        if isinstance(self._socket, ssl.SSLSocket):
            self._tls_lock = threading.Lock()
            self._socket.setblocking(False)
        else:
            self._socket.settimeout(None)
        self.version = Version(self.connected.header("version") or "1.0")
        self._parser.version = self.version
        server_offer = HeartBeatOffer.parse(self.connected.header("heart-beat"))
        self.heart_beat = negotiate_heart_beat(heart_beat, server_offer)
        self.server = self.connected.header("server") or "unknown"
        now = time.monotonic()
        self._last_read = now
        self._last_write = now
        self._reader = threading.Thread(
            target=self._read_loop, name=f"jms-stomp-reader[{self.where}]", daemon=True
        )
        self._reader.start()

    def _start_tls(self, context: ssl.SSLContext, host: str) -> socket.socket:
        try:
            return context.wrap_socket(self._socket, server_hostname=host)
        except ssl.SSLCertVerificationError as error:
            raise JMSException(
                f"refusing {self.where}: its TLS certificate cannot be verified: "
                f"{error.verify_message}{_verify_hint(error)}",
                linked_exception=error,
            ) from error
        except ssl.SSLError as error:
            raise JMSException(
                f"the TLS handshake with {self.where} failed: {error.reason or error} (is it a "
                "TLS port? a plain STOMP port is a stomp:// URL)",
                linked_exception=error,
            ) from error
        except OSError as error:
            raise JMSException(
                f"the TLS handshake with {self.where} failed: {error.strerror or error} (is it a "
                "TLS port? a plain STOMP port is a stomp:// URL)",
                linked_exception=error,
            ) from error

    def _handshake(
        self,
        login: str | None,
        passcode: str | None,
        client_id: str | None,
        extra_headers: Iterable[tuple[str, str]],
        heart_beat: HeartBeatOffer,
        timeout_s: float,
    ) -> Frame:
        headers = [("accept-version", "1.2"), ("host", self._virtual_host)]
        headers.append(("heart-beat", heart_beat.header_value()))
        for name, value in (("login", login), ("passcode", passcode), ("client-id", client_id)):
            if value is not None:
                headers.append((name, value))
        headers.extend(extra_headers)
        self._socket.sendall(Frame("CONNECT", tuple(headers)).to_bytes(Version.V1_2))
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise JMSException(f"{self.where} did not answer CONNECT within {timeout_s:g} s")
            self._socket.settimeout(remaining)
            try:
                data = self._socket.recv(_READ_SIZE)
            except TimeoutError:
                continue
            except OSError as error:
                raise JMSException(f"connecting to {self.where} failed: {error}") from error
            if not data:
                hint = (
                    " (so a broker refuses this client's certificate, or the lack of one)"
                    if isinstance(self._socket, ssl.SSLSocket)
                    else " (a TLS port?)"
                )
                raise JMSException(
                    f"{self.where} closed the connection instead of answering CONNECT{hint}"
                )
            try:
                for event in self._parser.feed(data):
                    if isinstance(event, HeartBeat):
                        continue
                    if event.command == "CONNECTED":
                        return event
                    if event.command == "ERROR":
                        refusal = error_from_frame(event, self.where)
                        if isinstance(refusal, JMSException):
                            raise refusal
                        raise JMSException(str(refusal))
                    raise JMSException(f"{self.where} answered CONNECT with {event.command}")
            except StompProtocolError as error:
                raise JMSException(
                    f"{self.where} sent a malformed frame: {error.message}"
                ) from None

    # -- writing -------------------------------------------------------------------------------

    def send(self, frame: Frame) -> None:
        """Write one frame."""
        self.send_many((frame,))

    def send_many(self, frames: Iterable[Frame]) -> None:
        """Write frames in one go, in order."""
        data = b"".join(frame.to_bytes(self.version) for frame in frames)
        self._check_usable()
        try:
            with self._write_lock:
                self._send_all(data)
                self._last_write = time.monotonic()
        except OSError as error:
            lost = JMSException(f"the connection to {self.where} was lost: {error}")
            self._lose(lost)
            raise lost from error

    def _send_all(self, data: bytes) -> None:
        """Write all of ``data`` (holding the write lock)."""
        if not isinstance(self._socket, ssl.SSLSocket):
            self._socket.sendall(data)
            return
        view = memoryview(data)
        while view:
            with self._tls_lock:
                try:
                    sent = self._socket.send(view)
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    sent = 0  # retried with the same bytes, as OpenSSL wants
            if sent:
                view = view[sent:]
            else:
                select.select([], [self._socket], [], _TLS_WAIT_S)

    def request(self, frame: Frame, timeout_s: float | None = None) -> Frame:
        """Write ``frame`` with a ``receipt`` header and wait for the RECEIPT (returned). An
        ERROR answering it raises the exception it stands for, as does a RECEIPT by which a jms
        broker refuses the request (the connection stays usable then); so does losing the
        connection."""
        waiter = _Waiter()
        receipt = self._register(waiter)
        try:
            self.send(Frame(frame.command, (*frame.headers, ("receipt", receipt)), frame.body))
            if not waiter.event.wait(timeout_s):
                raise JMSException(
                    f"{self.where} sent no RECEIPT for {frame.command} within {timeout_s:g} s"
                )
        finally:
            with self._waiters_lock:
                self._waiters.pop(receipt, None)
        failure = waiter.failure(self.where)
        if failure is not None:
            raise failure
        assert waiter.frame is not None
        return waiter.frame

    def request_async(self, frame: Frame, on_done: Callable[[Exception | None], None]) -> None:
        """Write ``frame`` with a ``receipt`` header and return; ``on_done`` gets what
        ``request`` would raise (None for a plain RECEIPT) exactly once, on the reader thread or
        the one that finds the connection lost. Raises only when the connection is already
        unusable (then ``on_done`` is never called)."""
        waiter = _Waiter(lambda settled: on_done(settled.failure(self.where)))
        receipt = self._register(waiter)
        try:
            self.send(Frame(frame.command, (*frame.headers, ("receipt", receipt)), frame.body))
        except JMSException as error:
            with self._waiters_lock:
                unsettled = self._waiters.pop(receipt, None)
            if unsettled is not None:  # not yet settled by the connection's loss
                unsettled.settle(None, error)

    def _register(self, waiter: _Waiter) -> str:
        receipt = f"r-{next(self._receipt_ids)}"
        with self._waiters_lock:
            self._check_usable()
            self._waiters[receipt] = waiter
        return receipt

    def _check_usable(self) -> None:
        if self._lost is not None:
            raise JMSException(f"the connection to {self.where} is lost: {self._lost.reason}")
        if self._closed:
            raise JMSException(f"the connection to {self.where} is closed")

    @property
    def lost(self) -> JMSException | None:
        return self._lost

    def close(self, timeout_s: float = 5.0) -> None:
        """DISCONNECT (waiting up to ``timeout_s`` for its RECEIPT) and close. Idempotent."""
        if self._closing:
            return
        self._closing = True
        if self._lost is None:
            with suppress(JMSException):  # closing anyway
                self.request(Frame("DISCONNECT"), timeout_s)
        self._closed = True
        self._shut()
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout_s)

    def _shut(self) -> None:
        with suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()

    # -- reading -------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        sock = self._socket
        intervals = self.heart_beat
        periods = [ms for ms in (intervals.send_every_ms, intervals.expect_every_ms) if ms]
        tick = min(periods) / 2000 if periods else None
        try:
            while not self._closed:
                data = self._receive(sock, tick)
                if data is not None:
                    if not data:
                        raise JMSException(f"{self.where} closed the connection")
                    self._last_read = time.monotonic()
                    for event in self._parser.feed(data):
                        if isinstance(event, Frame):
                            self._dispatch(event)
                self._keep_alive()
        except StompProtocolError as error:
            self._lose(JMSException(f"{self.where} sent a malformed frame: {error.message}"))
        except JMSException as error:
            self._lose(error)
        except (OSError, ValueError) as error:
            self._lose(JMSException(f"the connection to {self.where} was lost: {error}"))

    def _receive(self, sock: socket.socket, wait_s: float | None) -> bytes | None:
        """What arrived within ``wait_s`` (None: nothing; ``b""``: the end of the stream)."""
        with self._tls_lock:
            # TLS may hold decrypted bytes the socket no longer shows as readable.
            buffered = isinstance(sock, ssl.SSLSocket) and sock.pending()
        if not buffered and not select.select([sock], [], [], wait_s)[0]:
            return None
        with self._tls_lock:
            try:
                return sock.recv(_READ_SIZE)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                return None  # a part of a TLS record: the rest is on its way

    def _keep_alive(self) -> None:
        now = time.monotonic()
        expect_ms = self.heart_beat.expect_every_ms
        if expect_ms and (now - self._last_read) * 1000 > expect_ms * _HEART_BEAT_TOLERANCE:
            raise JMSException(
                f"{self.where} sent nothing for {(now - self._last_read) * 1000:.0f} ms; it "
                f"promised heart-beats every {expect_ms} ms"
            )
        send_ms = self.heart_beat.send_every_ms
        idle = send_ms and (now - self._last_write) * 1000 >= send_ms / 2
        # Never block the reader: skip a beat when another thread is writing anyway, or when
        # the socket has no room for it (then a TLS write could not finish either).
        if idle and self._write_lock.acquire(blocking=False):
            try:
                if select.select([], [self._socket], [], 0)[1]:
                    self._send_all(b"\n")
                    self._last_write = now
            finally:
                self._write_lock.release()

    def _dispatch(self, frame: Frame) -> None:
        command = frame.command
        if command == "MESSAGE":
            self._on_message(frame)
        elif command == "RECEIPT":
            with self._waiters_lock:
                waiter = self._waiters.pop(frame.header("receipt-id") or "", None)
            if waiter is not None:
                waiter.settle(frame, None)
        elif command == "ERROR":
            error = error_from_frame(frame, self.where)
            receipt = frame.header("receipt-id")
            with self._waiters_lock:
                waiter = self._waiters.pop(receipt, None) if receipt is not None else None
            if waiter is not None:
                waiter.settle(None, error)
            if isinstance(error, JMSException):
                raise error
            raise JMSException(str(error))

    def _lose(self, error: JMSException) -> None:
        """The connection ended without the application closing it."""
        with self._waiters_lock:
            first = self._lost is None
            if first:
                self._lost = error
            waiters = list(self._waiters.values())
            self._waiters.clear()
        for waiter in waiters:
            waiter.settle(None, error)
        if first and not self._closing:
            self._shut()
            self._on_lost(error)


def _verify_hint(error: ssl.SSLCertVerificationError) -> str:
    if error.verify_code in (2, 19, 20, 21):  # unknown issuer, self-signed somewhere in the chain
        return (
            " (its issuer is not in this client's trust store: for a private CA pass "
            "ssl_context=ssl.create_default_context(cafile=CA_PEM), or --ca CA_PEM on the command line)"
        )
    if error.verify_code in (62, 64):  # X509_V_ERR_HOSTNAME_MISMATCH, _IP_ADDRESS_MISMATCH
        return " (connect with a host name the certificate names)"
    return ""
