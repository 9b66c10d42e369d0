"""usage: cache_lru.py DIR RUNNER MODEL

The compiled-code cache's size limit, whatever this host's code sizes: runs
MODEL once (entry A), then with another pipeline option (entry B) under a
limit with room for the larger of the two but not both, and prints what the
directory holds after each step; then B again (a hit)."""
import glob
import os
import subprocess
import sys

directory, runner, model = sys.argv[1:4]
base = [runner, model, "--random-weights", "3", "--prompt", "In the",
        "--generate", "4", "--cache-dir", directory]


def entries():
    return sorted(glob.glob(os.path.join(directory, "*.tfmo")))


def run(*extra):
    return subprocess.run(base + list(extra), check=True, capture_output=True,
                          text=True).stdout


run()
(a,) = entries()
# B's size, measured in a directory of its own.
probe = directory + "-probe"
subprocess.run([runner, model, "--random-weights", "3", "--prompt", "In the",
                "--generate", "4", "--cache-dir", probe,
                "--pipeline-options=debug=vectorize=0"], check=True,
               capture_output=True)
(b,) = glob.glob(os.path.join(probe, "*.tfmo"))
sizes = os.path.getsize(a), os.path.getsize(b)
limit = max(sizes) + min(sizes) // 2
print(f"one entry: {len(entries())}")
run("--cache-limit", str(limit), "--pipeline-options=debug=vectorize=0")
kept = entries()
print(f"after B under the limit: {len(kept)} entry, A evicted: "
      f"{a not in kept}")
out = run("--cache-limit", str(limit), "--pipeline-options=debug=vectorize=0")
print("B again:", "cache hit" if "(cache hit)" in out else "cache miss")
