"""``-o json`` written piece by piece is byte for byte the one indented JSON List it always was."""

from __future__ import annotations

import io
from typing import Any

import msgspec
import pytest

from berth.sim import output
from berth.sim.output import as_list, to_json, write_json


def _whole(objects: list[dict[str, Any]]) -> str:
    return msgspec.json.format(msgspec.json.encode(as_list(objects)), indent=4).decode() + "\n"


CASES = [
    [],
    [{}],
    [{"kind": "Pod", "metadata": {"name": "p", "labels": {}}, "spec": {"a": [], "b": [1, {"c": None}]}}],
    [{"text": 'line\nbreak "quoted" é ✓', "n": 1.5, "t": True}],
    [
        {"kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"containers": [{"name": "c"}]}}
        for i in range(1200)
    ],
]


@pytest.mark.parametrize("objects", CASES, ids=["empty", "one-empty", "nested", "strings", "many-chunks"])
def test_pieces_join_to_the_whole(objects: list[dict[str, Any]]) -> None:
    assert to_json(objects) == _whole(objects)
    text = io.StringIO()
    write_json(objects, text)
    assert text.getvalue() == _whole(objects)
    binary = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    write_json(objects, binary)
    assert binary.buffer.getvalue().decode() == _whole(objects)  # type: ignore[attr-defined]


def test_a_listing_is_written_in_pieces() -> None:
    objects = [{"metadata": {"name": f"p{i}"}} for i in range(3 * output._CHUNK_ITEMS)]
    assert len(list(output.json_chunks(objects))) == 5  # head, three chunks of items, tail
