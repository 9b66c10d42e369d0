"""usage: ledger_totals.py LEDGER.json

Prints each function's totals (parameters, FLOPs, weight bytes, KV-cache
bytes per token) and per-category parameters and FLOPs from the output of
`transformer-opt --tfm-print-ledger=format=json`, one line each, for diffing
the ledgers of two front ends and for FileCheck.
"""
import json
import sys

for f in json.load(open(sys.argv[1])):
    t = f["totals"]
    print(f"@{f['function']}: ops {t['ops']} params {t['params']} "
          f"FLOPs {t['flops']} weight bytes {t['weight_bytes']} "
          f"KV bytes/token {t['kv_cache_bytes_per_token']}")
    for name, cat in sorted(t["categories"].items()):
        print(f"  {name}: ops {cat['ops']} params {cat['params']} "
              f"FLOPs {cat['flops']}")
