/*
 * Compatibility finder: shows the guard's precomputed verdicts for the selected options.
 *
 * This script decides nothing. The site build runs the guard (compat.finder) over every
 * combination of the menus and every backend and writes the results to finder-data.js,
 * which assigns window.COMPAT_FINDER_DATA; here we only fill the menus from that data, look
 * up the selected combination and render it. The data file is loaded on demand, only on the
 * finder page, and as a script rather than with fetch() so the site also works from disk.
 */
(function () {
  "use strict";

  var DATA_GLOBAL = "COMPAT_FINDER_DATA";
  var DATA_FILE = "finder-data.js";
  // Where this script was loaded from; the data file sits next to it.
  var SCRIPT_SRC = document.currentScript ? document.currentScript.src : null;

  var VERDICT_VIEW = {
    compatible: { glyph: "\u2705", text: "compatible" },
    warnings: { glyph: "\u26A0\uFE0F", text: "compatible with warnings" },
    incompatible: { glyph: "\u274C", text: "incompatible" },
  };
  var SEVERITY_GLYPH = {
    error: "\u274C",
    warning: "\u26A0\uFE0F",
    info: "\u2139\uFE0F",
  };

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function loadData(done, failed) {
    if (window[DATA_GLOBAL]) {
      done(window[DATA_GLOBAL]);
      return;
    }
    if (!SCRIPT_SRC) {
      failed("cannot locate " + DATA_FILE);
      return;
    }
    var script = document.createElement("script");
    script.src = new URL(DATA_FILE, SCRIPT_SRC).href;
    script.onload = function () {
      if (window[DATA_GLOBAL]) done(window[DATA_GLOBAL]);
      else failed(DATA_FILE + " did not define the finder's data");
    };
    script.onerror = function () {
      failed("cannot load " + script.src);
    };
    document.head.appendChild(script);
  }

  function readHash() {
    var state = {};
    var hash = window.location.hash.replace(/^#/, "");
    hash.split("&").forEach(function (part) {
      var pair = part.split("=");
      if (pair.length === 2) state[decodeURIComponent(pair[0])] = decodeURIComponent(pair[1]);
    });
    return state;
  }

  function writeHash(data, selects) {
    var parts = data.axes.map(function (axis, i) {
      return encodeURIComponent(axis.id) + "=" + encodeURIComponent(selects[i].value);
    });
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + parts.join("&"));
    }
  }

  function setUpMenus(form, data) {
    var wanted = readHash();
    return data.axes.map(function (axis) {
      var select = form.querySelector('select[data-axis="' + axis.id + '"]');
      if (!select) throw new Error("the page has no menu for " + axis.id);
      select.textContent = "";
      axis.options.forEach(function (option) {
        var node = element("option", null, option.label);
        node.value = option.value;
        select.appendChild(node);
      });
      var known = axis.options.some(function (option) {
        return option.value === wanted[axis.id];
      });
      select.value = known ? wanted[axis.id] : axis.initial;
      return select;
    });
  }

  // The combination's index: mixed radix over the axes, the last axis varying fastest.
  function combinationIndex(data, selects) {
    var index = 0;
    data.axes.forEach(function (axis, i) {
      var position = axis.options.findIndex(function (option) {
        return option.value === selects[i].value;
      });
      index = index * axis.options.length + Math.max(position, 0);
    });
    return index;
  }

  function selectedArgs(data, selects) {
    var args = [];
    data.axes.forEach(function (axis, i) {
      var option = axis.options.find(function (candidate) {
        return candidate.value === selects[i].value;
      });
      if (option && option.args) args.push(option.args);
    });
    return args.join(" ");
  }

  function reasonItem(data, findingId) {
    var finding = data.findings[findingId];
    var severity = data.severities[finding[0]];
    var phases = data.strings[finding[3]];
    var item = element("li", "compat-finder-reason compat-finder-" + severity);
    item.dataset.rule = data.strings[finding[1]];
    item.dataset.severity = severity;
    item.appendChild(element("span", "compat-finder-glyph", SEVERITY_GLYPH[severity] + " "));
    item.appendChild(element("code", "compat-finder-rule", data.strings[finding[1]]));
    // Every row runs both phases on one backend: name a phase only when just one is meant.
    if (phases && phases.indexOf("+") < 0) {
      item.appendChild(document.createTextNode(" "));
      item.appendChild(element("span", "compat-finder-phase", phases + " only"));
    }
    item.appendChild(document.createTextNode(" " + data.strings[finding[2]]));
    return item;
  }

  function render(data, selects, output) {
    var index = combinationIndex(data, selects);
    var outcomes = data.results[index];
    var defaults = data.defaults[index];
    var rows = data.backends.map(function (name, b) {
      var outcome = data.outcomes[outcomes[b]];
      return { name: name, b: b, verdict: data.verdicts[outcome[0]], rank: outcome[0], ids: outcome[1] };
    });
    // Most useful first: compatible, then with warnings, then incompatible; matrix order within.
    rows.sort(function (x, y) {
      return x.rank - y.rank || x.b - y.b;
    });

    var counts = {};
    rows.forEach(function (row) {
      counts[row.verdict] = (counts[row.verdict] || 0) + 1;
    });
    var summary = element("p", "compat-finder-summary");
    summary.appendChild(
      document.createTextNode(
        data.verdicts
          .map(function (verdict) {
            return VERDICT_VIEW[verdict].glyph + " " + (counts[verdict] || 0) + " " + VERDICT_VIEW[verdict].text;
          })
          .join(" · ") + ". "
      )
    );
    var prefill = defaults[0] >= 0 ? data.backends[defaults[0]] : null;
    var decode = defaults[1] >= 0 ? data.backends[defaults[1]] : null;
    if (prefill || decode) {
      summary.appendChild(document.createTextNode("Without "));
      summary.appendChild(element("code", null, "--attention-backend"));
      summary.appendChild(document.createTextNode(", SGLang picks "));
      if (prefill === decode) {
        summary.appendChild(element("code", null, prefill));
      } else {
        summary.appendChild(element("code", null, prefill || "none"));
        summary.appendChild(document.createTextNode(" for prefill and "));
        summary.appendChild(element("code", null, decode || "none"));
        summary.appendChild(document.createTextNode(" for decode"));
      }
      summary.appendChild(document.createTextNode("."));
    } else {
      summary.appendChild(document.createTextNode("SGLang has no default backend for this selection."));
    }

    var commandIntro = element("p", "compat-finder-command", "Check one backend yourself:");
    var command = element("pre", "compat-finder-command");
    command.appendChild(
      element("code", null, "compat check " + selectedArgs(data, selects) + " --attention-backend NAME")
    );

    var table = element("table", "compat-finder-table");
    var head = table.appendChild(element("thead")).appendChild(element("tr"));
    ["Backend", "Verdict", "Reasons"].forEach(function (title) {
      head.appendChild(element("th", null, title));
    });
    var body = table.appendChild(element("tbody"));
    rows.forEach(function (row) {
      var tr = element("tr", "compat-finder-row compat-finder-" + row.verdict);
      tr.dataset.backend = row.name;
      tr.dataset.verdict = row.verdict;
      var name = tr.appendChild(element("td", "compat-finder-backend"));
      name.appendChild(element("code", null, row.name));
      if (row.name === prefill || row.name === decode) {
        name.appendChild(document.createTextNode(" "));
        name.appendChild(element("span", "compat-finder-default", "default"));
      }
      var view = VERDICT_VIEW[row.verdict];
      var verdict = tr.appendChild(element("td", "compat-finder-verdict"));
      verdict.appendChild(element("span", "compat-finder-glyph", view.glyph));
      verdict.appendChild(document.createTextNode(" " + view.text));
      var reasons = tr.appendChild(element("td", "compat-finder-reasons"));
      if (row.ids.length === 0) {
        reasons.appendChild(element("span", "compat-finder-none", "no findings"));
      } else {
        var list = reasons.appendChild(element("ul"));
        row.ids.forEach(function (id) {
          list.appendChild(reasonItem(data, id));
        });
      }
      body.appendChild(tr);
    });

    output.textContent = "";
    output.appendChild(summary);
    output.appendChild(commandIntro);
    output.appendChild(command);
    var wrap = output.appendChild(element("div", "compat-finder-scroll"));
    wrap.appendChild(table);
    output.dataset.combination = String(index);
  }

  function init() {
    var form = document.getElementById("compat-finder");
    var output = document.getElementById("compat-finder-results");
    if (!form || !output || form.dataset.ready) return;
    form.dataset.ready = "loading";
    loadData(
      function (data) {
        var selects;
        try {
          selects = setUpMenus(form, data);
        } catch (error) {
          output.textContent = "The finder cannot start: " + error.message;
          return;
        }
        var update = function () {
          render(data, selects, output);
          writeHash(data, selects);
        };
        selects.forEach(function (select) {
          select.addEventListener("change", update);
        });
        form.addEventListener("submit", function (event) {
          event.preventDefault();
        });
        update();
        form.dataset.ready = "true";
      },
      function (message) {
        output.textContent = "The finder cannot start: " + message;
      }
    );
  }

  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
