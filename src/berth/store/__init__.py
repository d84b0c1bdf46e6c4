"""berth.store: the cluster state — `MemoryStore` (the embedded `Store`), watches, selectors.

`MemoryStore.open(data_dir)` is the durable variant, journaled to SQLite (`berth.store.journal`).

Objects are wire-form dicts. Dicts handed out by a store are immutable: copy (`copy_object`) before changing.
"""

from berth.store.fieldselector import FieldSelector, compile_field_selector
from berth.store.journal import DataDirInUse, Journal, JournalError
from berth.store.keys import KindInfoLike, KindResolver, KindSpec, key_of, static_kinds
from berth.store.memory import AdmissionFn, MemoryStore
from berth.store.mergepatch import merge_patch
from berth.store.objcopy import copy_object

__all__ = [
    "AdmissionFn",
    "DataDirInUse",
    "FieldSelector",
    "Journal",
    "JournalError",
    "KindInfoLike",
    "KindResolver",
    "KindSpec",
    "MemoryStore",
    "compile_field_selector",
    "copy_object",
    "key_of",
    "merge_patch",
    "static_kinds",
]
