"""Memwall's PyTorch importer: torch.export programs to the mw dialect.

`mw-import` (memwall.cli) is the command; `memwall.api.import_module` the
Python entry point. See docs/importer.md.
"""

from .fx_importer import MwImportError  # noqa: F401

__all__ = ["MwImportError"]
