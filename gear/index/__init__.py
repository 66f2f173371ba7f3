"""The embedded index on disk: its manifest and integrity check (manifest), building and opening it (build),
adding and removing passages (update), copying it into Elasticsearch (migrate).

home finds the index a recorded run was made on."""

from gear.index.build import build_index, open_memory_backend, save_index
from gear.index.manifest import FORMAT_VERSION, MANIFEST, Manifest, check_files, verify_index

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST",
    "Manifest",
    "build_index",
    "check_files",
    "open_memory_backend",
    "save_index",
    "verify_index",
]
