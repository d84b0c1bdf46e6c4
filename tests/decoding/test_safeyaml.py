"""YAML loaded with the limits of the API server's decoder (`berth.api.safeyaml`)."""

from __future__ import annotations

import pytest
import yaml
from decoding_helpers import LAUGHS

from berth.api.safeyaml import (
    MAX_OBJECT_BYTES,
    YAMLLimitError,
    allowed_alias_ratio,
    load_all,
    load_one,
)


def test_a_billion_laughs_is_refused_as_go_yaml_refuses_it() -> None:
    assert len(LAUGHS) < 1024
    with pytest.raises(YAMLLimitError, match=r"^yaml: document contains excessive aliasing$"):
        load_all(LAUGHS)


def test_an_anchor_that_contains_itself_is_refused() -> None:
    with pytest.raises(YAMLLimitError, match=r"^yaml: anchor value contains itself$"):
        load_all("a: &x [1, *x]\n")


def test_ordinary_aliases_and_merge_keys_load() -> None:
    text = "base: &b {cpu: 1, memory: 2}\nx:\n  <<: *b\n  cpu: 3\ny: *b\n---\n---\nz: 1\n"
    assert load_all(text) == [
        {"base": {"cpu": 1, "memory": 2}, "x": {"cpu": 3, "memory": 2}, "y": {"cpu": 1, "memory": 2}},
        None,
        {"z": 1},
    ]


def test_a_few_aliases_of_a_large_document_stay_under_the_ratio() -> None:
    items = "\n".join(f"- {{name: n{i}, v: *v}}" for i in range(2000))
    docs = load_all(f"v: &v [1, 2, 3]\nitems:\n{items}\n")
    assert len(docs[0]["items"]) == 2000


def test_allowed_alias_ratio_is_go_yamls() -> None:
    assert allowed_alias_ratio(1000) == 0.99
    assert allowed_alias_ratio(400_000) == 0.99
    assert allowed_alias_ratio(2_200_000) == pytest.approx(0.545)
    assert allowed_alias_ratio(4_000_000) == 0.10
    assert allowed_alias_ratio(9_000_000) == 0.10


def test_an_object_over_the_request_body_limit_is_refused() -> None:
    big = "x" * (MAX_OBJECT_BYTES + 10)
    with pytest.raises(YAMLLimitError, match=r"^the document is \d+ bytes: over the API server's limit"):
        load_all(f"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: {big}\n")


def test_a_list_may_be_larger_than_one_object() -> None:
    half = "x" * (MAX_OBJECT_BYTES // 2)
    text = f"kind: List\nitems:\n- {{data: {half}}}\n- {{data: {half}}}\n- {{data: {half}}}\n"
    assert len(load_all(text)[0]["items"]) == 3
    with pytest.raises(YAMLLimitError, match=r"^an item is \d+ bytes"):
        load_all(f"kind: PodList\nitems:\n- {{data: {half}{half}{half}}}\n")


def test_load_one_reads_a_single_document() -> None:
    assert load_one("a: 1\n") == {"a": 1}
    assert load_one("") is None
    with pytest.raises(yaml.YAMLError):
        load_one("a: 1\n---\nb: 2\n")
