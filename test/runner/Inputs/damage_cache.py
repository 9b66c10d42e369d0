"""usage: damage_cache.py flip|truncate|fifo|symlink|rekey DIR [OTHER_DIR]

Damages every entry of a compiled-code cache directory: `flip` inverts one
byte in the middle of the object code, `truncate` keeps the first 20 bytes,
`fifo` replaces each by a named pipe, `symlink` by a link to /dev/zero;
`rekey` copies each entry of OTHER_DIR over DIR's entry (one each) with
DIR's key written into its header, as one who can write the directory
might pass one model's code off as another's.
"""
import glob
import os
import sys

how, directory = sys.argv[1:3]
entries = sorted(glob.glob(os.path.join(directory, "*.tfmo")))
if not entries:
    sys.exit(f"no cache entries in {directory}")
for path in entries:
    if how == "truncate":
        os.truncate(path, 20)
        continue
    if how == "fifo":
        os.remove(path)
        os.mkfifo(path)
        continue
    if how == "symlink":
        os.remove(path)
        os.symlink("/dev/zero", path)
        continue
    if how == "rekey":
        other = sorted(glob.glob(os.path.join(sys.argv[3], "*.tfmo")))[0]
        data = bytearray(open(other, "rb").read())
        data[8:40] = bytes.fromhex(os.path.basename(path)[:-len(".tfmo")])
        with open(path, "wb") as f:
            f.write(data)
        continue
    data = bytearray(open(path, "rb").read())
    data[(80 + len(data)) // 2] ^= 0xFF
    with open(path, "wb") as f:
        f.write(data)
