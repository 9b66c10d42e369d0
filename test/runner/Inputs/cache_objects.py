"""usage: cache_objects.py CACHE_DIR OUT_PREFIX

Writes the ELF objects of the one entry of a compiled-code cache directory
as OUT_PREFIX0.o, OUT_PREFIX1.o, ...: the entry's payload is the object
bundle of lib/Engine/Compile.cpp ("tfm-objects\\n", then per object its
size as 8 little-endian bytes and its bytes).
"""
import glob
import os
import struct
import sys

directory, prefix = sys.argv[1:3]
entries = glob.glob(os.path.join(directory, "*.tfmo"))
if len(entries) != 1:
    sys.exit(f"expected one cache entry in {directory}, found {len(entries)}")
data = open(entries[0], "rb").read()
magic = b"tfm-objects\n"
at = data.find(magic)
if at < 0:
    sys.exit(f"{entries[0]}: no object bundle")
rest = data[at + len(magic):]
count = 0
while rest:
    (size,) = struct.unpack("<Q", rest[:8])
    if size > len(rest) - 8:
        sys.exit(f"{entries[0]}: truncated object bundle")
    with open(f"{prefix}{count}.o", "wb") as out:
        out.write(rest[8:8 + size])
    rest = rest[8 + size:]
    count += 1
print(f"{count} object(s)")
