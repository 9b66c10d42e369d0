"""usage: compare.py ACTUAL.npy EXPECTED.npy [ATOL]

Exits non-zero unless both arrays have the same shape and dtype and agree
within ATOL (default 1e-5) absolute plus 1e-5 relative.
"""
import sys

import numpy as np

actual, expected = np.load(sys.argv[1]), np.load(sys.argv[2])
atol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
if actual.shape != expected.shape or actual.dtype != expected.dtype:
    sys.exit(f"mismatch: got {actual.dtype}{list(actual.shape)}, "
             f"expected {expected.dtype}{list(expected.shape)}")
err = np.max(np.abs(actual.astype(np.float64) - expected), initial=0.0)
if not np.allclose(actual, expected, atol=atol, rtol=1e-5):
    sys.exit(f"mismatch: max abs error {err:.3g} > {atol}")
print(f"match: max abs error {err:.3g}")
