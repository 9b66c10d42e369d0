#!/usr/bin/env python3
"""Writes the PTX of every gpu.binary in a module lowered with
--tfm-gpu-pipeline="format=isa" (or gpu-module-to-binary format=isa).

usage: extract-ptx.py INPUT.mlir OUTPUT.ptx
Several binaries are concatenated (each a complete PTX module would not
assemble as one file: use one binary per input, as the tfm pipeline emits).
"""
import re
import sys


def unescape(text):
    # MLIR prints non-printable bytes of string attributes as \XX (hex).
    return re.sub(r"\\([0-9A-Fa-f]{2})",
                  lambda m: chr(int(m.group(1), 16)), text)


def main():
    source = open(sys.argv[1]).read()
    parts = []
    for match in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', source):
        parts.append(unescape(match.group(1)))
    if not parts:
        sys.exit(f"{sys.argv[1]}: no gpu.binary with PTX (format=isa) found")
    with open(sys.argv[2], "w") as out:
        out.write("\n".join(parts))


if __name__ == "__main__":
    main()
