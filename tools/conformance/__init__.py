"""Conformance harness: run a released SGLang's own start-up code on a grid of launches.

The harness fetches the pinned `sglang` wheel (no dependencies), loads the real
`sglang/srt/server_args.py` and the utility functions that decide attention behaviour,
and stands in for what is absent here: a fake `torch` describing one GPU profile, and
stubs for the heavy third-party and `sglang` modules those files import but the start-up
decisions never use.
"""
