"""Safe YAML loading: the limits Kubernetes puts on YAML, so that a small file cannot take all memory.

PyYAML shares the object of an anchor among its aliases, so a "billion laughs" file loads small, but anything
that walks or copies it (validation, JSON encoding, a deep copy) expands every alias. The API server's YAML
decoder (go-yaml, under sigs.k8s.io/yaml) refuses such documents as it decodes them: every decoded node counts,
nodes decoded through an alias count as aliased, and once more than 100 aliased nodes out of more than 1000
make up more than the allowed ratio (99% up to 400 000 nodes, falling linearly to 10% at 4 000 000) the document
is refused with ``yaml: document contains excessive aliasing``. This module counts the same quantities on the
composed node graph (without expanding it) before anything is constructed, refuses an anchor that contains
itself and nesting deeper than go-yaml's 10 000 levels, and refuses an object larger than kube-apiserver's
3 MiB request body limit (the members of a ``List`` are objects of their own).
"""

from __future__ import annotations

import re
from typing import Any, Final

import yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_OBJECT_BYTES",
    "YAMLLimitError",
    "allowed_alias_ratio",
    "load_all",
    "load_one",
]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_OBJECT_BYTES: Final = 3 * 1024 * 1024
"""kube-apiserver's limit on a request body, i.e. on one object (3 MiB)."""
MAX_DEPTH: Final = 10_000
"""go-yaml's limit on nesting ("exceeded max depth of 10000")."""
_RATIO_LOW: Final = 400_000
_RATIO_HIGH: Final = 4_000_000


_MAY_HAVE_ALIAS: Final = re.compile(r"(?:^|[\s\[{,:])\*")
"""Where an alias can start (``*`` at a node's start: after a line start, a blank or a flow indicator); text
without a match has no alias, and its documents skip the count."""


class YAMLLimitError(ValueError):
    """A YAML document over one of the limits; the message is go-yaml's or kube's wording."""


def allowed_alias_ratio(decode_count: int) -> float:
    """go-yaml's allowed share of aliased nodes among `decode_count` decoded nodes."""
    if decode_count <= _RATIO_LOW:
        return 0.99
    if decode_count >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decode_count - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_aliasing(root: yaml.Node) -> None:
    """Refuse excessive aliasing, an anchor containing itself, or too deep nesting (iteratively, in document
    order: the first occurrence of a node is its anchor, every later one an alias)."""
    expanded: dict[int, int] = {}  # decodes of the node's subtree, aliases expanded
    aliased: dict[int, int] = {}  # of those, the decodes made under an alias (when decoded outside any)
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, list[yaml.Node], int]] = [(root, _children(root), 0)]
    open_nodes.add(id(root))
    totals: list[list[int]] = [[1, 0]]
    while stack:
        node, kids, i = stack[-1]
        if i == len(kids):
            stack.pop()
            total, under = totals.pop()
            open_nodes.discard(id(node))
            expanded[id(node)] = total
            aliased[id(node)] = under
            if totals:
                totals[-1][0] += total
                totals[-1][1] += under
            continue
        stack[-1] = (node, kids, i + 1)
        child = kids[i]
        key = id(child)
        if key in open_nodes:
            raise YAMLLimitError("yaml: anchor value contains itself")
        if key in expanded:  # an alias: the alias node, then its anchor's whole subtree under the alias
            totals[-1][0] += 1 + expanded[key]
            totals[-1][1] += expanded[key]
            continue
        if len(stack) >= MAX_DEPTH:
            raise YAMLLimitError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        open_nodes.add(key)
        stack.append((child, _children(child), 0))
        totals.append([1, 0])
    decodes, under_alias = expanded[id(root)], aliased[id(root)]
    if under_alias > 100 and decodes > 1000 and under_alias / decodes > allowed_alias_ratio(decodes):
        raise YAMLLimitError("yaml: document contains excessive aliasing")


def _span(node: yaml.Node) -> int:
    return int(node.end_mark.index - node.start_mark.index)


def _list_items(node: yaml.Node) -> list[yaml.Node] | None:
    """The item nodes of a ``kind: ...List`` document, None for any other document."""
    if not isinstance(node, yaml.MappingNode):
        return None
    fields = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
    kind, items = fields.get("kind"), fields.get("items")
    if (
        isinstance(kind, yaml.ScalarNode)
        and str(kind.value).endswith("List")
        and isinstance(items, yaml.SequenceNode)
    ):
        return list(items.value)
    return None


def _check_size(node: yaml.Node) -> None:
    """Refuse an object (a document, or a member of a List document) over the request body limit."""
    items = _list_items(node)
    for n in items if items is not None else [node]:
        size = _span(n)
        if size > MAX_OBJECT_BYTES:
            where = "an item" if items is not None else "the document"
            raise YAMLLimitError(
                f"{where} is {size} bytes: over the API server's limit of {MAX_OBJECT_BYTES} bytes for an object"
            )


def may_have_aliases(text: str) -> bool:
    """Whether `text` may hold an alias (whose documents may then share dicts and lists); False is certain."""
    return _MAY_HAVE_ALIAS.search(text) is not None


def load_all(text: str | bytes) -> list[Any]:
    """Every document of `text`, each checked against the limits before it is constructed.

    Raises yaml.YAMLError for malformed YAML and YAMLLimitError for a document over a limit."""
    aliases = _MAY_HAVE_ALIAS.search(text if isinstance(text, str) else text.decode("utf-8", "replace"))
    loader = _Loader(text)
    try:
        docs: list[Any] = []
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                docs.append(None)
                continue
            if aliases:
                _check_aliasing(node)
            _check_size(node)
            docs.append(loader.construct_document(node))
        return docs
    finally:
        loader.dispose()


def load_one(text: str | bytes) -> Any:
    """The single document of `text` (None when empty), checked as :func:`load_all` checks it."""
    docs = load_all(text)
    if len(docs) > 1:
        raise yaml.YAMLError("expected a single document in the stream")
    return docs[0] if docs else None
