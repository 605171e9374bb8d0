"""Compiled selectors against hand-written Python lambdas of the same predicates, in one run.

Each selector is timed as ``Selector.matches`` and as the lambda a person would write for it,
reading the same message fields the same way (``m._properties.get``, ``m._type``), over the same
fixed set of messages; both must agree on every message before anything is timed. The goal
(issues 3 and 13) is at most 2.0x the lambda on every row. Times are CPU time of this process
(``time.process_time``), and the two are timed alternately, best of ``REPEATS`` each, so that
other work on a shared machine neither inflates one side nor drifts between them. Run:
``python bench/selector_bench.py``.
"""

from __future__ import annotations

import random
import re
import time
import timeit
from collections import deque
from collections.abc import Callable
from typing import Any

from jms.message import TextMessage
from jms.selector import Selector
from jms.types import Double, Int, Long

MESSAGES = 2_000
REPEATS = 15
SKU = re.compile("BK-...-.*", re.DOTALL).fullmatch


def make_messages(count: int, seed: int = 3) -> list[TextMessage]:
    """A fixed mix of messages; some lack the properties the selectors read."""
    rng = random.Random(seed)
    messages = []
    for index in range(count):
        message = TextMessage(f"order {index}")
        message.set_jms_type(rng.choice(["car", "truck", "bike", None]))
        message.set_jms_priority(rng.randrange(10))
        properties = {
            "color": rng.choice(["blue", "red", "green"]),
            "weight": rng.choice([Int(rng.randrange(5000)), Long(rng.randrange(5000))]),
            "country": rng.choice(["UK", "US", "France", "Peru", "Japan"]),
            "sku": rng.choice(["BK-", "CD-", "BK"]) + f"{rng.randrange(1000):03d}-x",
            "price": Double(round(rng.uniform(1, 500), 2)),
            "quantity": Int(rng.randrange(1, 40)),
            "discount": Int(rng.randrange(30)),
            "age": Int(rng.randrange(10, 25)),
        }
        for name, value in properties.items():
            if rng.random() < 0.9:
                message.set_object_property(name, value)
        messages.append(message)
    return messages


def _prop(m: Any, name: str) -> Any:
    return m._properties.get(name)


# (selector, the lambda a person would write for it). The lambdas handle absent properties.
CASES: list[tuple[str, Callable[[Any], bool]]] = [
    (
        "JMSType = 'car' AND color = 'blue' AND weight > 2500",
        lambda m: (
            m._type == "car"
            and m._properties.get("color") == "blue"
            and (w := m._properties.get("weight")) is not None
            and w > 2500
        ),
    ),
    (
        "sku LIKE 'BK-___-%'",
        lambda m: (s := m._properties.get("sku")) is not None and SKU(s) is not None,
    ),
    (
        "country IN ('UK', 'US', 'France')",
        lambda m: m._properties.get("country") in {"UK", "US", "France"},
    ),
    (
        "price * quantity BETWEEN 1000 AND 5000",
        lambda m: (
            (p := m._properties.get("price")) is not None
            and (q := m._properties.get("quantity")) is not None
            and 1000 <= p * q <= 5000
        ),
    ),
    (
        "discount IS NULL OR discount < 10 OR JMSPriority > 7",
        lambda m: (d := m._properties.get("discount")) is None or d < 10 or m._priority > 7,
    ),
    (
        "age BETWEEN 15 AND 19 AND weight * 2 > 5000",
        lambda m: (
            (a := m._properties.get("age")) is not None
            and 15 <= a <= 19
            and (w := m._properties.get("weight")) is not None
            and w * 2 > 5000
        ),
    ),
]


def nanoseconds_per_call(
    functions: tuple[Callable[[Any], bool], ...], messages: list[Any]
) -> list[float]:
    """CPU nanoseconds per message of each function, timed in turn, best of ``REPEATS``."""
    timers = [
        timeit.Timer(lambda f=f: deque(map(f, messages), maxlen=0), timer=time.process_time)
        for f in functions
    ]
    best = [float("inf")] * len(functions)
    for _ in range(REPEATS):
        for index, timer in enumerate(timers):
            best[index] = min(best[index], timer.timeit(number=10))
    return [seconds / (10 * len(messages)) * 1e9 for seconds in best]


def main() -> None:
    messages = make_messages(MESSAGES)
    rows = []
    for text, handwritten in CASES:
        selector = Selector(text)
        for message in messages:
            assert selector.matches(message) == bool(handwritten(message)), (text, message)
        compiled_ns, lambda_ns = nanoseconds_per_call((selector.matches, handwritten), messages)
        rows.append((text, compiled_ns, lambda_ns, compiled_ns / lambda_ns))
    width = max(len(text) for text, *_ in rows)
    print(f"{'selector':<{width}}  {'Selector ns':>11}  {'lambda ns':>9}  {'ratio':>5}")
    for text, compiled_ns, lambda_ns, ratio in rows:
        print(f"{text:<{width}}  {compiled_ns:>11.0f}  {lambda_ns:>9.0f}  {ratio:>5.2f}")
    print(f"({MESSAGES} messages, best of {REPEATS}; goal: ratio <= 2.00 on every row)")


if __name__ == "__main__":
    main()
