"""Each release's draft backend factory: the backends with a draft variant, and where it raises.

Read from `sglang/srt/speculative/draft_utils.py` of each release's wheel
(`DraftBackendFactory`): the keys of the backend map that `create_decode_backend` and
`create_draft_extend_backend` share, the line of `_create_backend` that raises for any other
backend ("EAGLE is not supported in ... attention backend X"), and the builders that raise
for a model without MLA, with their lines; from 0.5.20, the branch ahead of each map that
builds a QSA model's draft on QSA's own backends (`_QSA_LINES`). A release absent from
`LINES` has its predecessor's factory. `tests/engine/test_conformance_draft.py` runs each
release's own factory over the draft grid and checks every prediction, line included.
"""

from __future__ import annotations

from collections.abc import Mapping

from compat.engine.build import DraftRaise, DraftRules, ModelDraftPath
from compat.vocab.terms import ModelFeature

# The backend map of 0.5.7, then what each release adds to it and takes from it.
_BASE = frozenset({"flashinfer", "triton", "aiter", "fa3", "hybrid_linear_attn", "flashmla",
                   "trtllm_mha", "trtllm_mla", "nsa", "ascend"})  # fmt: skip
_ADDED: Mapping[str, frozenset[str]] = {
    "0.5.10": frozenset({"fa4"}),
    "0.5.12": frozenset({"dsv4", "tokenspeed_mla"}),
    "0.5.13": frozenset({"cutedsl_mla", "dsa"}),
    "0.5.16": frozenset({"intel_amx"}),
    "0.5.20": frozenset({"intel_xpu"}),
}
_REMOVED: Mapping[str, frozenset[str]] = {"0.5.23": frozenset({"tokenspeed_mla"})}
# The factory's branch for a QSA model's draft, ahead of each backend map (`if
# self.qsa_profile is not None:`), from 0.5.20: release -> (its line in
# `create_decode_backend`, in `create_draft_extend_backend`); a release absent has its
# predecessor's. Either branch calls its builder and stamps what it builds "qsa".
_QSA_LINES: Mapping[str, tuple[int, int]] = {"0.5.20": (89, 124), "0.5.23": (89, 123)}
_QSA_DECODE, _QSA_EXTEND = (
    "_create_qwen_qsa_decode_backend",
    "_create_qwen_qsa_draft_extend_backend",
)
_TRTLLM_DECODE, _TRTLLM_EXTEND = (
    "_create_trtllm_mla_decode_backend",
    "_create_trtllm_mla_prefill_backend",
)
_TOKENSPEED_DECODE = "_create_tokenspeed_mla_decode_backend"
_TOKENSPEED_EXTEND = "_create_tokenspeed_mla_prefill_backend"
_CUTEDSL_DECODE = "_create_cutedsl_mla_decode_backend"

# release -> (`_create_backend`'s raise, {backend: (decode builder, its raise line)},
# {backend: (draft-extend builder, its raise line)}). cute-dsl MLA has no draft-extend
# builder of its own: its map entry is trtllm_mla's (up to 0.5.16 its decode one too).
_Lines = tuple[int, dict[str, tuple[str, int]], dict[str, tuple[str, int]]]
LINES: Mapping[str, _Lines] = {
    "0.5.7": (35, {"trtllm_mla": (_TRTLLM_DECODE, 171)}, {"trtllm_mla": (_TRTLLM_EXTEND, 230)}),
    "0.5.10": (35, {"trtllm_mla": (_TRTLLM_DECODE, 182)}, {"trtllm_mla": (_TRTLLM_EXTEND, 249)}),
    "0.5.11": (35, {"trtllm_mla": (_TRTLLM_DECODE, 187)}, {"trtllm_mla": (_TRTLLM_EXTEND, 258)}),
    "0.5.12": (35, {"trtllm_mla": (_TRTLLM_DECODE, 191), "tokenspeed_mla": (_TOKENSPEED_DECODE, 205)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 285), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 295)}),
    "0.5.13": (35, {"trtllm_mla": (_TRTLLM_DECODE, 196), "tokenspeed_mla": (_TOKENSPEED_DECODE, 216),
                    "cutedsl_mla": (_TRTLLM_DECODE, 196)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 301), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 311),
                "cutedsl_mla": (_TRTLLM_EXTEND, 301)}),
    "0.5.14": (35, {"trtllm_mla": (_TRTLLM_DECODE, 197), "tokenspeed_mla": (_TOKENSPEED_DECODE, 217),
                    "cutedsl_mla": (_TRTLLM_DECODE, 197)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 306), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 316),
                "cutedsl_mla": (_TRTLLM_EXTEND, 306)}),
    "0.5.15": (35, {"trtllm_mla": (_TRTLLM_DECODE, 197), "tokenspeed_mla": (_TOKENSPEED_DECODE, 217),
                    "cutedsl_mla": (_TRTLLM_DECODE, 197)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 311), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 321),
                "cutedsl_mla": (_TRTLLM_EXTEND, 311)}),
    "0.5.16": (40, {"trtllm_mla": (_TRTLLM_DECODE, 226), "tokenspeed_mla": (_TOKENSPEED_DECODE, 246),
                    "cutedsl_mla": (_TRTLLM_DECODE, 226)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 345), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 355),
                "cutedsl_mla": (_TRTLLM_EXTEND, 345)}),
    "0.5.17": (56, {"trtllm_mla": (_TRTLLM_DECODE, 252), "tokenspeed_mla": (_TOKENSPEED_DECODE, 283),
                    "cutedsl_mla": (_CUTEDSL_DECODE, 269)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 382), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 392),
                "cutedsl_mla": (_TRTLLM_EXTEND, 382)}),
    "0.5.18": (59, {"trtllm_mla": (_TRTLLM_DECODE, 302), "tokenspeed_mla": (_TOKENSPEED_DECODE, 339),
                    "cutedsl_mla": (_CUTEDSL_DECODE, 322)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 465), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 478),
                "cutedsl_mla": (_TRTLLM_EXTEND, 465)}),
    "0.5.19": (59, {"trtllm_mla": (_TRTLLM_DECODE, 310), "tokenspeed_mla": (_TOKENSPEED_DECODE, 347),
                    "cutedsl_mla": (_CUTEDSL_DECODE, 330)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 473), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 486),
                "cutedsl_mla": (_TRTLLM_EXTEND, 473)}),
    "0.5.20": (64, {"trtllm_mla": (_TRTLLM_DECODE, 362), "tokenspeed_mla": (_TOKENSPEED_DECODE, 399),
                    "cutedsl_mla": (_CUTEDSL_DECODE, 382)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 533), "tokenspeed_mla": (_TOKENSPEED_EXTEND, 546),
                "cutedsl_mla": (_TRTLLM_EXTEND, 533)}),
    "0.5.23": (64, {"trtllm_mla": (_TRTLLM_DECODE, 360), "cutedsl_mla": (_CUTEDSL_DECODE, 380)},
               {"trtllm_mla": (_TRTLLM_EXTEND, 514), "cutedsl_mla": (_TRTLLM_EXTEND, 514)}),
}  # fmt: skip


def _raises(builders: dict[str, tuple[str, int]]) -> dict[str, DraftRaise]:
    return {backend: DraftRaise(line, function) for backend, (function, line) in builders.items()}


def draft_rules(release: str, before: DraftRules | None) -> DraftRules | None:
    """The draft factory of `release`: its row of `LINES`, else the one before's, with the
    backends its map adds."""
    lines = LINES.get(release)
    if before is None:
        before = DraftRules(0, _BASE)
    backends = (before.backends | _ADDED.get(release, frozenset())) - _REMOVED.get(
        release, frozenset()
    )
    own = _qsa_path(release, before.model_path)
    if lines is None:
        return DraftRules(before.line, backends, before.mla_decode, before.mla_extend, own)
    line, decode, extend = lines
    return DraftRules(line, backends, _raises(decode), _raises(extend), own)


def _qsa_path(release: str, before: ModelDraftPath | None) -> ModelDraftPath | None:
    """The QSA branch of `release`: its row of `_QSA_LINES`, else the one before's."""
    lines = _QSA_LINES.get(release)
    if lines is None:
        return before
    decode, extend = lines
    return ModelDraftPath(ModelFeature.QSA_PROFILE, "qsa", DraftRaise(decode, _QSA_DECODE),
                          DraftRaise(extend, _QSA_EXTEND))  # fmt: skip
