"""Text through the C API as (pointer, length): a prompt with a NUL byte is
encoded whole, decoded text with a NUL byte comes back whole, a stop string
with a NUL byte stops there; Model.encode retries when a template adds more
ids than its first guess."""
import sys

import tfm

m = tfm.load(sys.argv[1], weights=sys.argv[2], threads=1)
ids = m.encode("In the\0 beginning")
print("encode with a NUL:", len(ids), "ids, byte 0 at", list(ids).index(0))
print("decode with a NUL:", repr(m.decode([72, 0, 105])))
out = m.generate("In the beginning", max_new_tokens=12, stop="\0x",
                 stop_at_eos=False)
print("a stop string with a NUL is a string of 2 bytes:", len(out) == 16 + 12)

# A tokenizer whose template adds 20 special tokens: more than encode's
# first guess (the prompt's bytes + 16); it is told the count and retries.
if len(sys.argv) > 3:
    import json
    import os
    import shutil
    directory = sys.argv[4]
    os.makedirs(directory, exist_ok=True)
    shutil.copy(sys.argv[3], os.path.join(directory, "config.json"))
    printable = (list(range(ord("!"), ord("~") + 1)) +
                 list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    chars, extra = {}, 0
    for byte in range(256):
        chars[byte] = chr(byte) if byte in printable else chr(256 + extra)
        extra += byte not in printable
    vocab = {chars[b]: b for b in range(255)}
    vocab["<s>"] = 255
    spec = {"version": "1.0",
            "added_tokens": [{"id": 255, "content": "<s>", "special": True,
                              "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": False}],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                              "trim_offsets": True, "use_regex": True},
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}] * 20
                + [{"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [], "special_tokens": {
                    "<s>": {"id": "<s>", "ids": [255], "tokens": ["<s>"]}}},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": vocab, "merges": []}}
    with open(os.path.join(directory, "tokenizer.json"), "w") as f:
        json.dump(spec, f)
    t = tfm.load(os.path.join(directory, "config.json"), random_weights=1,
                 threads=1)
    ids = t.encode("hi")
    print("a template of 20 special tokens:", len(ids), "ids")
