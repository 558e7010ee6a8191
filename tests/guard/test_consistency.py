"""The page and the guard agree on every single-column claim of the enumerated space."""

from __future__ import annotations

from dataclasses import replace

from cells import (
    FP4,
    fp4_accepted_on_b200,
    fp4_refused_on_b200,
    page_cell_position,
    page_row_index,
)
from consistency import (
    PAGE,
    configurations,
    defining_fields,
    read_claims,
    run_proof,
    shards,
    verify,
)

from compat import AttentionConfig, check
from compat.claim.columns import ColumnId
from compat.vocab.terms import Arch


def test_guard_verdicts_equal_the_page_on_every_claim() -> None:
    configs, compared, mismatches = run_proof()
    assert mismatches == []
    # 2 archs x 17 x 17 backends x 5 dtypes x 3 topk x 5 page sizes x 7 hardware presets
    assert configs == 2 * 17 * 17 * 5 * 3 * 5 * 7
    assert compared > configs


def test_the_proofs_configurations_are_the_constructed_ones() -> None:
    """The proof builds its configurations as copies (`replaced`); each equals the one the
    constructor builds from its fields, and is as valid, in a shard of each architecture."""
    parts = [shards()[0], shards()[-1]]
    built = list(configurations(parts))
    constructed = [AttentionConfig(**m, **launch) for m, launch in defining_fields(parts)]
    assert len(built) == len(constructed) == 2 * 17 * 5 * 3 * 5 * 7
    assert built == constructed
    assert [c.parsed for c in built] == [c.parsed for c in constructed]
    assert {c.attention_arch for c in built} == {"mha", "mla"}


def test_the_proof_notices_a_page_that_disagrees() -> None:
    page = PAGE.read_text(encoding="utf-8")
    lines = page.splitlines()
    # Hand-edit one FP4 claim: the page now says an MLA backend that the matrix refuses an
    # FP4 cache (picked from the live matrix) reads one.
    backend = fp4_refused_on_b200(Arch.MLA)
    index = page_row_index(lines, Arch.MLA, backend)
    cells = lines[index].split("|")
    column = page_cell_position(Arch.MLA, ColumnId.FP4_KV)
    assert cells[column].strip() == "❌"
    cells[column] = " ✅ "
    lines[index] = "|".join(cells)
    claims = read_claims("\n".join(lines))
    config = AttentionConfig(
        attention_arch="mla",
        attention_backend=backend,
        kv_cache_dtype=FP4,
        platform="cuda",
        compute_capability=(10, 0),
    )
    _, mismatches = verify(config, check(config), claims)
    assert mismatches and "FP4 KV Cache" in mismatches[0]
    fine = replace(config, attention_backend=fp4_accepted_on_b200(Arch.MLA)[0])
    assert verify(fine, check(fine), claims)[1] == []
