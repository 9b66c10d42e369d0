"""Checks the weight bytes a tensor-parallel rank reports binding.

usage: shard_bytes.py DIR RANKS RUNNER_OUTPUT

DIR's checkpoint (model.safetensors, or the shards its index names) holds
Llama-named f32 tensors. With RANKS ranks, rank 0 binds 1/RANKS of each
attention and MLP projection (q/o, gate/up/down; k/v too when the key/value
heads are at least RANKS, else the one head its query heads read) and the
LM head's and the embedding's rows when the vocabulary divides over the
ranks (vocab-parallel; a tied embedding stays whole), and the whole of
everything else (norms, an MoE router). Of a mixture's E experts (Mixtral's
`experts.N.w1`, Qwen3-MoE's `experts.N.gate_proj`) rank 0 binds experts 0
to E/RANKS - 1 whole when RANKS divides E (expert parallelism), else
1/RANKS of every expert.
Exits 1 unless the runner's "tensor parallel: rank 0 of RANKS binds W bytes
of weights" line says exactly that W.
"""
import glob
import json
import os
import re
import struct
import sys

DIVIDED = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
           "down_proj")


def tensors(directory):
    for path in sorted(glob.glob(os.path.join(directory, "*.safetensors"))):
        with open(path, "rb") as f:
            (length,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(length))
        for name, info in header.items():
            if name != "__metadata__":
                begin, end = info["data_offsets"]
                yield name, end - begin


def main():
    directory, ranks, output = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    kv_heads = config.get("num_key_value_heads",
                          config["num_attention_heads"])
    experts = config.get("num_local_experts", config.get("num_experts", 0))
    expected = 0
    for name, size in tensors(directory):
        expert = re.search(r"\.experts\.(\d+)\.", name)
        if expert and experts % ranks == 0:
            expected += size if int(expert.group(1)) < experts // ranks else 0
        elif expert:
            expected += size // ranks
        elif ".k_proj." in name or ".v_proj." in name:
            expected += size // min(ranks, kv_heads)
        elif any(f".{p}." in name for p in DIVIDED):
            expected += size // ranks
        elif name == "lm_head.weight" and config["vocab_size"] % ranks == 0:
            expected += size // ranks
        elif (name == "model.embed_tokens.weight"
              and config["vocab_size"] % ranks == 0
              and not config.get("tie_word_embeddings", False)):
            expected += size // ranks
        else:
            expected += size
    with open(output) as f:
        m = re.search(r"tensor parallel: rank 0 of (\d+) binds (\d+) bytes",
                      f.read())
    if not m or int(m.group(1)) != ranks:
        sys.exit(f"no 'rank 0 of {ranks} binds' line in {output}")
    got = int(m.group(2))
    if got != expected:
        sys.exit(f"rank 0 binds {got} bytes, expected {expected}")
    print(f"PASS: rank 0 of {ranks} binds {got} bytes")


if __name__ == "__main__":
    main()
