"""The child process of the crash tests (``test_crash.py``): a broker, a producer and a consumer.

One store can be opened by one broker process only (the store's lock), so the producer and
the consumer are two threads of this one process, each with its own connection to the embedded
broker — as two applications sharing an in-process broker would be. The parent kills the whole
process with SIGKILL at a random moment, which is what a broker crash is; the network issue runs
the same scenario with the broker as its own process and the clients remote.

Usage: ``crash_child.py STORE LOG_DIRECTORY ROUND SEED queue|topic|sequences``.

Side logs are written with ``os.write`` on ``O_APPEND`` files, one line per call, after the call
they report returned. A write that returned is in the kernel's page cache, which SIGKILL of this
process does not lose (only a machine crash would, which this test does not simulate), so the
parent reads every line this process wrote before it died. Lines:

- producer: ``S uid`` (a plain send returned), ``B txid uid…`` (a transaction's messages, written
  before sending them), ``C txid`` (its commit returned), ``X txid`` (its rollback returned);
- consumer: ``R uid redelivered count`` (a message received), ``P uid…`` (about to call
  ``acknowledge()`` for these: a kill before the next line may or may not have acknowledged them),
  ``A`` (that ``acknowledge()`` returned), ``V`` (``recover()`` returned: the unacknowledged ones
  come back);
- sequences: ``N seq`` (a NON_PERSISTENT message with this sequence number was delivered).
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
import traceback
from pathlib import Path

from jms.broker import ConsumerSpec, Delivery, DestinationPolicy, open_broker
from jms.client import Connection, ConnectionFactory, Session
from jms.message import DeliveryMode, Destination, Queue, TextMessage, Topic

#: Small enough that a backlog pages, so paging is crashed too.
MEMORY_WINDOW = 16
MAX_DELIVERIES = 4
PREFETCH = 10
CLIENT_ID = "crash-consumer"
SUBSCRIPTION = "crash-sub"
MESSAGES_PER_ROUND = 2000


class _Log:
    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def line(self, *fields: object) -> None:
        os.write(self._fd, (" ".join(str(f) for f in fields) + "\n").encode())


def _fail(log: _Log) -> None:
    log.line("E", traceback.format_exc().replace("\n", " | "))
    os._exit(3)


def send_round(
    connection: Connection, destination: Destination, log: _Log, rng: random.Random, round_: int
) -> None:
    """Send the round's PERSISTENT messages, plain and in transactions, logging each send ("S")
    and each transaction's begin/commit/rollback ("B"/"C"/"X") only after the call returned."""
    plain = connection.create_session().create_producer(destination)
    transacted_session = connection.create_session(True)
    transacted = transacted_session.create_producer(destination)
    n = 0
    transaction = 0
    while n < MESSAGES_PER_ROUND:
        if rng.random() < 0.7:
            uid = f"{round_}-{n}"
            n += 1
            plain.send(_message(uid), delivery_mode=DeliveryMode.PERSISTENT)
            log.line("S", uid)
            continue
        transaction += 1
        txid = f"{round_}-t{transaction}"
        uids = [f"{round_}-{n + k}" for k in range(rng.randint(1, 12))]
        n += len(uids)
        log.line("B", txid, *uids)
        for uid in uids:
            transacted.send(_message(uid), delivery_mode=DeliveryMode.PERSISTENT)
        if rng.random() < 0.2:
            transacted_session.rollback()
            log.line("X", txid)
        else:
            transacted_session.commit()
            log.line("C", txid)


def produce(url: str, destination: Destination, log: _Log, rng: random.Random, round_: int) -> None:
    try:
        with ConnectionFactory(url).create_connection() as connection:
            send_round(connection, destination, log, rng, round_)
    except Exception:
        _fail(log)


def _message(uid: str) -> TextMessage:
    message = TextMessage(uid)
    message.set_string_property("uid", uid)
    return message


def consume(
    url: str, kind: str, log: _Log, rng: random.Random, subscribed: threading.Event
) -> None:
    try:
        factory = ConnectionFactory(url, client_id=CLIENT_ID, prefetch=PREFETCH)
        with factory.create_connection() as connection:
            session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
            if kind == "topic":
                consumer = session.create_durable_consumer(Topic("crash"), SUBSCRIPTION)
            else:
                consumer = session.create_consumer(Queue("crash"))
            subscribed.set()
            connection.start()
            unacknowledged: list[str] = []
            while True:
                message = consumer.receive(100)
                if message is None:
                    continue
                uid = message.get_string_property("uid")
                log.line(
                    "R",
                    uid,
                    int(message.get_jms_redelivered()),
                    message.get_int_property("JMSXDeliveryCount"),
                )
                unacknowledged.append(uid)
                roll = rng.random()
                if roll < 0.03:
                    session.recover()
                    log.line("V")
                    unacknowledged.clear()
                elif roll < 0.4:
                    log.line("P", *unacknowledged)
                    message.acknowledge()
                    log.line("A")
                    unacknowledged.clear()
                if rng.random() < 0.2:
                    time.sleep(0.002)  # a slower consumer lets a backlog (and paging) build up
    except Exception:
        _fail(log)


def sequences(url: str, log: _Log) -> None:
    """Deliver NON_PERSISTENT messages straight from the broker and log their numbers."""
    broker = open_broker(url)
    connection = broker.connect()

    def sink(delivery: Delivery) -> None:
        # The log line is the application seeing the message: only once its number is durable.
        delivery.recorded.wait()
        log.line("N", delivery.seq)

    seen: list[Delivery] = []
    broker.add_consumer(connection, ConsumerSpec(Queue("numbers"), prefetch=1_000_000), seen.append)
    print("ready", flush=True)
    n = 0
    while True:
        message = TextMessage(str(n))
        message.set_jms_destination(Queue("numbers"))
        message.set_jms_delivery_mode(DeliveryMode.NON_PERSISTENT)
        broker.send(connection, message)
        while seen:
            sink(seen.pop(0))
        n += 1


def main() -> None:
    store, log_directory, round_text, seed_text, kind = sys.argv[1:]
    url = f"embedded://{store}"  # a directory or a postgresql:// URL
    logs = Path(log_directory)
    round_ = int(round_text)
    rng = random.Random(int(seed_text))
    if kind == "sequences":
        sequences(url, _Log(logs / f"sequences-{round_}.log"))
        return
    open_broker(
        url,
        default_policy=DestinationPolicy(
            memory_window=MEMORY_WINDOW, max_deliveries=MAX_DELIVERIES
        ),
    )
    destination: Destination = Topic("crash") if kind == "topic" else Queue("crash")
    subscribed = threading.Event()
    consumer_log = _Log(logs / f"consumer-{round_}.log")
    consumer_rng = random.Random(rng.random())
    threading.Thread(
        target=consume, args=(url, kind, consumer_log, consumer_rng, subscribed), daemon=True
    ).start()
    if not subscribed.wait(30):
        raise SystemExit("the consumer did not subscribe within 30 s")
    print("ready", flush=True)
    produce(url, destination, _Log(logs / f"producer-{round_}.log"), rng, round_)
    time.sleep(3600)  # the parent kills us; the consumer keeps going meanwhile


if __name__ == "__main__":
    main()
