"""What each SGLang release knows about models: architectures, model types, quantization.

Read from each release's wheel by `tools/models.py` (`compat.engine.models.data`, generated)
and folded per release by `compat.engine.models.lookup`.
"""
