"""berth.store: the cluster state — the `Store` protocol, `MemoryStore`, typed errors, watches, selectors.

Objects are wire-form dicts. Dicts handed out by a store are immutable: copy (`copy_object`) before changing.
"""

from berth.store.errors import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    InternalError,
    Invalid,
    NotFound,
    ResourceExpired,
    StoreError,
    TooManyRequests,
)
from berth.store.fieldselector import FieldSelector, compile_field_selector
from berth.store.keys import KindInfoLike, KindResolver, KindSpec, ResourceKey, key_of, static_kinds
from berth.store.memory import AdmissionFn, MemoryStore
from berth.store.mergepatch import merge_patch
from berth.store.objcopy import copy_object
from berth.store.protocol import Store
from berth.store.watch import ADDED, DELETED, MODIFIED, Watch, WatchEvent

__all__ = [
    "ADDED",
    "DELETED",
    "MODIFIED",
    "AdmissionFn",
    "AlreadyExists",
    "BadRequest",
    "Conflict",
    "FieldSelector",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "KindInfoLike",
    "KindResolver",
    "KindSpec",
    "MemoryStore",
    "NotFound",
    "ResourceExpired",
    "ResourceKey",
    "Store",
    "StoreError",
    "TooManyRequests",
    "Watch",
    "WatchEvent",
    "compile_field_selector",
    "copy_object",
    "key_of",
    "merge_patch",
    "static_kinds",
]
