"""usage: huge_pages_check.py RUNNER-OUTPUT.txt

Checks that at least half of the bound weights (the `memory budget:` line's
weights) were in transparent huge pages when the runner reported its memory:
all of them but a partly filled last huge page, unless the kernel had no free
huge page at hand (it then falls back to base pages for that fault).
"""
import re
import sys

text = open(sys.argv[1]).read()
huge = re.search(r"memory: ([0-9.]+) MiB of the anonymous pages in "
                 r"transparent huge pages", text)
weights = re.search(r"memory budget: [0-9.]+ MiB \(weights ([0-9.]+) ", text)
if not huge or not weights:
    sys.exit(f"{sys.argv[1]}: no huge page or budget line in:\n{text}")
huge, weights = float(huge.group(1)), float(weights.group(1))
if huge < 0.5 * weights:
    sys.exit(f"{huge} MiB in huge pages, the weights are {weights} MiB")
