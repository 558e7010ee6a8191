import os

# Most tests are about the PR #14467 baseline, which SGLang 0.5.7 shipped: pin it (subprocesses
# inherit it) unless a run names another release. Tests of later releases say theirs.
os.environ.setdefault("COMPAT_SGLANG_VERSION", "0.5.7")
