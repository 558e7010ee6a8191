"""SGLang 0.5.18: the attention start-up rules and the page's tables of 0.5.17."""

from __future__ import annotations

from compat.releases.doc import tagged_page
from compat.releases.entry import DocChange, Release

PAGE = tagged_page("0.5.18", "docs/docs/advanced_features/attention_backend.mdx")

RELEASE = Release("0.5.18", doc_changes=(DocChange("no change of the page's tables", PAGE, page=PAGE),))
