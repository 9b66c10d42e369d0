"""Python helpers of the tfm compiler (test and reference tooling)."""
