"""Read each release's kernel pins and the kernel limits on its attention paths from the
wheels (`tools/kernel_limits.py` writes them to compat/releases/kernels_data.py)."""
