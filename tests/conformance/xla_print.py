"""Prints HLO text files the way the installed jaxlib's XLA prints them, for the print tests.

Usage: python xla_print.py MODE OUT_DIR FILE...

MODE is canonical, fingerprint or short_parsable (XLA's HloPrintOptions of those names). For
every FILE that XLA parses, writes OUT_DIR/<index>.txt with HloModule::ToString's text; for one
it cannot parse, OUT_DIR/<index>.err with XLA's message. One process for all files, so jax is
imported once.
"""
import os
import sys

from jax._src.lib import xla_client as xc

mode, out_dir, files = sys.argv[1], sys.argv[2], sys.argv[3:]
hlo = xc.hlo
options = getattr(hlo.HloPrintOptions, mode)()
for index, path in enumerate(files):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        module = hlo.hlo_module_from_text(text)
        result, suffix = module.to_string(options), ".txt"
    except Exception as e:  # XLA reports parse errors through its runtime error type
        result, suffix = str(e), ".err"
    with open(os.path.join(out_dir, "%d%s" % (index, suffix)), "w", encoding="utf-8") as f:
        f.write(result)
