"""usage: damage_cache.py flip|truncate DIR

Damages every entry of a compiled-code cache directory: `flip` inverts one
byte in the middle of the object code, `truncate` keeps the first 20 bytes.
"""
import glob
import os
import sys

how, directory = sys.argv[1:3]
entries = glob.glob(os.path.join(directory, "*.tfmo"))
if not entries:
    sys.exit(f"no cache entries in {directory}")
for path in entries:
    if how == "truncate":
        os.truncate(path, 20)
        continue
    data = bytearray(open(path, "rb").read())
    data[(80 + len(data)) // 2] ^= 0xFF
    with open(path, "wb") as f:
        f.write(data)
