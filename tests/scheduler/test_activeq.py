"""KeyedFifoQueue pops in the order of a heap of (key, arrival number, item) entries."""

import heapq
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from berth.scheduler.activeq import KeyedFifoQueue

keys = st.tuples(st.integers(-2, 2), st.sampled_from([0.0, 1.5, 3.0]))
# a push of (key, item) or a pop (None)
operations = st.lists(st.one_of(st.tuples(keys, st.integers()), st.none()), max_size=60)


@given(operations)
def test_pops_as_a_heap_of_key_then_arrival(ops: list[tuple[tuple[int, float], int] | None]) -> None:
    queue: KeyedFifoQueue[int] = KeyedFifoQueue()
    heap: list[tuple[tuple[int, float], int, int]] = []
    arrival = itertools.count()
    for op in ops:
        if op is None:
            if heap:
                key, _, item = heapq.heappop(heap)
                assert queue.pop() == (key, item)
            continue
        queue.push(op[0], op[1])
        heapq.heappush(heap, (op[0], next(arrival), op[1]))
        assert len(queue) == len(heap)
    while heap:
        key, _, item = heapq.heappop(heap)
        assert queue.pop() == (key, item)
    assert len(queue) == 0


def test_equal_keys_pop_first_in_first_out_and_empty_raises() -> None:
    queue: KeyedFifoQueue[str] = KeyedFifoQueue()
    for key, item in [((0, 1.0), "a"), ((-1, 2.0), "b"), ((0, 1.0), "c"), ((-1, 2.0), "d"), ((0, 0.5), "e")]:
        queue.push(key, item)
    assert [queue.pop() for _ in range(5)] == [
        ((-1, 2.0), "b"),
        ((-1, 2.0), "d"),
        ((0, 0.5), "e"),
        ((0, 1.0), "a"),
        ((0, 1.0), "c"),
    ]
    with pytest.raises(IndexError):
        queue.pop()
