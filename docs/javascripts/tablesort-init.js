/*
 * Make the Markdown tables of every page sortable: click a header to sort by that column.
 * Uses the vendored tablesort (MIT, see vendor/LICENSE-tablesort.txt); Material for MkDocs
 * styles the sort indicators. Re-runs on Material's instant navigation when it is enabled.
 */
(function () {
  "use strict";

  function makeSortable() {
    if (typeof window.Tablesort !== "function") return;
    document.querySelectorAll("article table:not([class])").forEach(function (table) {
      if (table.dataset.sortable) return;
      table.dataset.sortable = "true";
      new window.Tablesort(table);
    });
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(makeSortable);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", makeSortable);
  } else {
    makeSortable();
  }
})();
