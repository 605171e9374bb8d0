"""The client process of the network crash test (``test_stomp_crash.py``): a producer and a
consumer talking to a ``jms broker`` process over STOMP while the parent kills that broker.

Usage: ``stomp_crash_child.py URL LOG_DIRECTORY ROUND SEED queue|topic``.

The producer sends PERSISTENT messages (each ``send`` returns once the broker's RECEIPT says it
has the message durably), plain and in transactions; the consumer receives with
CLIENT_ACKNOWLEDGE (client-individual acknowledgements on the wire, each ``acknowledge()``
returning once the broker has them) and sometimes recovers. They write the same side logs as
the embedded crash test's child (``tests/store/crash_child.py`` documents the lines), one
``os.write`` per line after the call it reports returned. When the broker dies, the calls raise
or the connection reports the loss; each thread then stops quietly, and the process exits: the
parent only kills the broker.
"""

from __future__ import annotations

import random
import sys
import threading
import time
import traceback
from pathlib import Path

from jms.client import ConnectionFactory, Session
from jms.errors import JMSException
from jms.message import Destination, Queue, Topic

# Run as a script: the repository root makes the embedded crash child's workload importable.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.store.crash_child import _Log, send_round

PREFETCH = 10
CLIENT_ID = "crash-consumer"
SUBSCRIPTION = "crash-sub"


def produce(url: str, destination: Destination, log: _Log, rng: random.Random, round_: int) -> None:
    try:
        with ConnectionFactory(url).create_connection() as connection:
            send_round(connection, destination, log, rng, round_)
    except JMSException:
        return  # the broker died under us: what returned is logged, the rest is not promised
    except Exception:
        log.line("E", traceback.format_exc().replace("\n", " | "))


def consume(
    url: str, kind: str, log: _Log, rng: random.Random, subscribed: threading.Event
) -> None:
    lost = threading.Event()
    try:
        factory = ConnectionFactory(url, client_id=CLIENT_ID, prefetch=PREFETCH)
        with factory.create_connection() as connection:
            connection.set_exception_listener(lambda error: lost.set())
            session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
            if kind == "topic":
                consumer = session.create_durable_consumer(Topic("crash"), SUBSCRIPTION)
            else:
                consumer = session.create_consumer(Queue("crash"))
            subscribed.set()
            connection.start()
            unacknowledged: list[str] = []
            while not lost.is_set():
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
    except JMSException:
        return
    except Exception:
        log.line("E", traceback.format_exc().replace("\n", " | "))
    finally:
        subscribed.set()


def main() -> None:
    url, log_directory, round_text, seed_text, kind = sys.argv[1:]
    logs = Path(log_directory)
    round_ = int(round_text)
    rng = random.Random(int(seed_text))
    destination: Destination = Topic("crash") if kind == "topic" else Queue("crash")
    subscribed = threading.Event()
    consumer = threading.Thread(
        target=consume,
        args=(
            url,
            kind,
            _Log(logs / f"consumer-{round_}.log"),
            random.Random(rng.random()),
            subscribed,
        ),
    )
    consumer.start()
    if not subscribed.wait(30):
        raise SystemExit("the consumer did not subscribe within 30 s")
    print("ready", flush=True)
    produce(url, destination, _Log(logs / f"producer-{round_}.log"), rng, round_)
    consumer.join()


if __name__ == "__main__":
    main()
