"""usage: ledger_bytes.py LEDGER.json INDEX.json

Prints the parameters and weight bytes of the first function of a
--tfm-print-ledger=format=json ledger and the total_size of a sharded
checkpoint's index (the bytes of its tensors as stored).
"""
import json
import sys

totals = json.load(open(sys.argv[1]))[0]["totals"]
index = json.load(open(sys.argv[2]))
print(f"params {totals['params']}, weight bytes {totals['weight_bytes']}, "
      f"the index's total_size {index['metadata']['total_size']}")
