"""Stores: where plan texts live (files, shared documents, memory)."""

from werkbaum_core.stores.memory import MemoryStore
from werkbaum_core.stores.protocol import Base, Snapshot, Store

__all__ = ["Base", "MemoryStore", "Snapshot", "Store"]
