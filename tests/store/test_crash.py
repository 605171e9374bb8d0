"""Crash tests: a real broker process on a durable store (the SQLite store, or the PostgreSQL store
on a throwaway server), killed with SIGKILL at random moments.

Each round starts ``crash_child.py`` (a broker with a producer thread and a CLIENT_ACKNOWLEDGE
consumer thread, see its docstring for why they share one process), lets it run for a random
while and kills it; the next round reopens the same store. After the last round the test
opens the store itself, drains what is left (the destination and its dead-letter queue), and
holds the side logs against the promises:

- every message whose send or commit returned is there or was acknowledged (or was being
  acknowledged when the process died) — none is lost;
- an acknowledged message is never delivered again, and nothing is left twice;
- a message delivered more than once carries JMSRedelivered=true on every later delivery, with a
  JMSXDeliveryCount at least its number of deliveries;
- a committed transaction is there whole, a rolled-back one not at all, and one cut by the crash
  either whole or not at all.

Rounds are seeded (``random.Random(seed)``): a failure names its seed, and the same seed replays
the same kill times and choices (thread timing still varies). Every wait has a timeout and every
child is killed and reaped, whatever happens.
"""

from __future__ import annotations

import random
import select
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jms.broker import close_embedded_broker, open_broker
from jms.client import ConnectionFactory, Session
from jms.message import DeliveryMode, Queue, TextMessage, Topic

CHILD = Path(__file__).with_name("crash_child.py")
ROUNDS = 12
SEEDS = {"queue": 20240601, "topic": 7}


@dataclass
class _History:
    """What the side logs say happened, in order."""

    sent: set[str] = field(default_factory=set)
    transactions: dict[str, list[str]] = field(default_factory=dict)
    committed: set[str] = field(default_factory=set)
    rolled_back: set[str] = field(default_factory=set)
    # uid -> [(position, redelivered, count)] and uid -> position of its acknowledgement
    deliveries: dict[str, list[tuple[int, bool, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    acknowledged: dict[str, int] = field(default_factory=dict)
    # Acknowledgements cut by the kill: they may have happened or not.
    maybe_acknowledged: set[str] = field(default_factory=set)
    position: int = 0

    def read_producer(self, path: Path) -> None:
        for fields in _lines(path):
            kind = fields[0]
            if kind == "S":
                self.sent.add(fields[1])
            elif kind == "B":
                self.transactions[fields[1]] = fields[2:]
            elif kind == "C":
                self.committed.add(fields[1])
                self.sent.update(self.transactions[fields[1]])
            elif kind == "X":
                self.rolled_back.add(fields[1])

    def read_consumer(self, path: Path) -> None:
        acknowledging: list[str] = []
        for fields in _lines(path):
            if fields[0] == "R":
                self.delivered(fields[1], fields[2] == "1", int(fields[3]))
            elif fields[0] == "P":
                acknowledging = fields[1:]
            elif fields[0] == "A":
                self.position += 1
                for uid in acknowledging:
                    assert uid not in self.acknowledged, f"{uid} was acknowledged twice"
                    self.acknowledged[uid] = self.position
                acknowledging = []
        self.maybe_acknowledged.update(acknowledging)

    def delivered(self, uid: str, redelivered: bool, count: int) -> None:
        self.position += 1
        self.deliveries[uid].append((self.position, redelivered, count))


def _lines(path: Path) -> Iterator[list[str]]:
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        fields = line.split(" ")
        if fields[0] == "E":
            pytest.fail(f"the child failed: {line[2:].replace(' | ', chr(10))}")
        yield fields


def _run_round(
    store: str | Path, logs: Path, round_: int, seed: int, kind: str, run_for: float
) -> None:
    stderr = (logs / f"stderr-{round_}.txt").open("w")
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(store), str(logs), str(round_), str(seed), kind],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 30)
        line = child.stdout.readline() if ready else ""
        if line != "ready\n":
            child.kill()
            child.wait(10)
            pytest.fail(
                f"round {round_}: the child did not start (exit {child.returncode}): "
                f"{(logs / f'stderr-{round_}.txt').read_text()}"
            )
        time.sleep(run_for)
        if child.poll() is not None:
            pytest.fail(
                f"round {round_}: the child died by itself (exit {child.returncode}): "
                f"{(logs / f'stderr-{round_}.txt').read_text()}"
            )
    finally:
        child.kill()  # SIGKILL
        child.wait(10)
        stderr.close()


def _drain(url: str, kind: str, history: _History) -> list[str]:
    """Receive everything left, as a last round that acknowledges everything; return the uids."""
    broker = open_broker(url)
    left: list[str] = []
    try:
        factory = ConnectionFactory(url, client_id="crash-consumer")
        with factory.create_connection() as connection:
            connection.start()
            session = connection.create_session(False, Session.CLIENT_ACKNOWLEDGE)
            if kind == "topic":
                source = session.create_durable_consumer(Topic("crash"), "crash-sub")
                name = "durable://crash-consumer/crash-sub"
            else:
                source = session.create_consumer(Queue("crash"))
                name = "queue://crash"
            dead = session.create_consumer(Queue("DLQ.crash"))
            deadline = time.monotonic() + 60
            while True:
                message = source.receive(200)
                if message is None:
                    depth = {s.name: s.depth - s.in_flight for s in broker.stats()}
                    if depth.get(name, 0) == 0:
                        break
                    assert time.monotonic() < deadline, f"{name} did not drain: {depth}"
                    continue
                uid = message.get_string_property("uid")
                history.delivered(
                    uid,
                    message.get_jms_redelivered(),
                    message.get_int_property("JMSXDeliveryCount"),
                )
                left.append(uid)
                message.acknowledge()
            while (message := dead.receive(200)) is not None:
                left.append(message.get_string_property("uid"))
                message.acknowledge()
    finally:
        close_embedded_broker(url)
    return left


def assert_promises_kept(history: _History, left: list[str], context: str) -> None:
    """The crash promises, held against the side logs and what was left in the store."""
    duplicates = sorted(uid for uid in set(left) if left.count(uid) > 1)
    assert not duplicates, f"left in the store twice: {duplicates[:10]} {context}"
    lost = sorted(history.sent - set(history.acknowledged) - history.maybe_acknowledged - set(left))
    assert not lost, f"{len(lost)} sent messages lost, e.g. {lost[:10]} {context}"
    for uid, acknowledged_at in history.acknowledged.items():
        again = [p for p, _, _ in history.deliveries[uid] if p > acknowledged_at]
        assert not again, f"{uid} was delivered again after its acknowledgement {context}"
        assert uid not in left, f"{uid} was acknowledged yet is still in the store {context}"
    for uid, deliveries in history.deliveries.items():
        for number, (_, redelivered, count) in enumerate(deliveries[1:], start=2):
            assert redelivered, f"delivery {number} of {uid} is not marked redelivered {context}"
            assert count >= number, (
                f"delivery {number} of {uid} has JMSXDeliveryCount {count} {context}"
            )
    seen = set(history.deliveries) | set(history.acknowledged) | set(left)
    for txid, uids in history.transactions.items():
        present = [uid for uid in uids if uid in seen]
        if txid in history.committed:
            assert present == uids, f"committed transaction {txid} is partly lost {context}"
        elif txid in history.rolled_back:
            assert not present, f"rolled-back transaction {txid} was delivered {context}"
        else:
            assert present in ([], uids), f"transaction {txid} is there in part {context}"


@pytest.mark.parametrize(
    ("store_kind", "kind"),
    [("sqlite", "queue"), ("sqlite", "topic"), ("postgresql", "queue"), ("postgresql", "topic")],
)
def test_sigkill_at_random_moments_loses_and_repeats_nothing_promised(
    request: pytest.FixtureRequest, tmp_path: Path, store_kind: str, kind: str
) -> None:
    seed = SEEDS[kind]
    rng = random.Random(seed)
    store = (
        request.getfixturevalue("postgresql_url")
        if store_kind == "postgresql"
        else str(tmp_path / "store")
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    for round_ in range(ROUNDS):
        _run_round(store, logs, round_, rng.randrange(2**32), kind, rng.uniform(0.05, 1.0))

    history = _History()
    for round_ in range(ROUNDS):
        history.read_producer(logs / f"producer-{round_}.log")
        history.read_consumer(logs / f"consumer-{round_}.log")
    left = _drain(f"embedded://{store}", kind, history)
    context = f"(seed {seed}, logs in {logs})"

    assert history.sent, f"no send returned in {ROUNDS} rounds {context}"
    assert history.acknowledged, f"nothing was acknowledged in {ROUNDS} rounds {context}"
    assert_promises_kept(history, left, context)


def test_sequence_numbers_of_non_persistent_messages_never_come_back_after_a_crash(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "store"
    logs = tmp_path / "logs"
    logs.mkdir()
    rng = random.Random(99)
    for round_ in range(2):
        _run_round(directory, logs, round_, 0, "sequences", rng.uniform(0.3, 0.6))
        seen = [int(fields[1]) for fields in _lines(logs / f"sequences-{round_}.log")]
        assert seen, "no non-persistent message was delivered before the kill"
        url = f"embedded://{directory}"
        broker = open_broker(url)
        try:
            with ConnectionFactory(url).create_connection() as connection:
                producer = connection.create_session().create_producer(Queue("numbers"))
                producer.send(TextMessage("after"), delivery_mode=DeliveryMode.NON_PERSISTENT)
            assert broker.last_sequence(Queue("numbers")) > max(seen)
        finally:
            close_embedded_broker(url)
