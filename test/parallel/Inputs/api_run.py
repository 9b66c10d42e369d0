"""One rank of a tensor-parallel run through the Python API.

usage (under mpirun -np N): api_run.py DIR IDS.npy N LOGITS.npy TOKENS.npy

Loads DIR with tfm.load(..., tensor_parallel=N), computes the logits of IDS
and 6 greedy tokens after its first row; rank 0 saves them (every rank gets
the same ones).
"""
import os
import sys

import numpy as np

import tfm


def main():
    directory, ids_path, ranks, logits_path, tokens_path = sys.argv[1:6]
    ids = np.load(ids_path)
    model = tfm.load(directory, tensor_parallel=int(ranks))
    logits = model.logits(ids)
    tokens = model.generate(ids[0].tolist(), max_new_tokens=6,
                            temperature=0)
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
        np.save(logits_path, np.asarray(logits, dtype=np.float32))
        np.save(tokens_path, np.asarray(tokens, dtype=np.int64))
    model.close()


if __name__ == "__main__":
    main()
