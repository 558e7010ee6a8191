/*
 * Compatibility finder: shows the guard's precomputed verdicts for the selected options.
 *
 * This script decides nothing. The site build runs the guard (compat.publish.finder) over every
 * combination of the menus and every backend, once per offered SGLang release and model, and
 * writes finder-releases.js (the releases, newest first, each with its model menu and data
 * files) and one finder-data-<release>-<model>.js each, which adds
 * window.COMPAT_FINDER_DATA["<release>/<model>"]; here we only fill the menus from that
 * data, look up the selected combination and render it. A release and model's file is loaded
 * when it is first selected (the initial one on load), only on the finder page, and as a
 * script rather than with fetch() so the site also works from disk.
 */
(function () {
  "use strict";

  var DATA_GLOBAL = "COMPAT_FINDER_DATA";
  var INDEX_GLOBAL = "COMPAT_FINDER_RELEASES";
  var INDEX_FILE = "finder-releases.js";
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

  // Scripts being loaded: file -> the callbacks waiting for it (one request per file).
  var pending = {};

  // Loads a generated script next to this one once; `ready()` says whether it has run.
  function loadScript(file, ready, done, failed) {
    if (ready()) {
      done();
      return;
    }
    if (!SCRIPT_SRC) {
      failed("cannot locate " + file);
      return;
    }
    var waiting = pending[file];
    if (!waiting) {
      waiting = pending[file] = [];
      var script = document.createElement("script");
      script.src = new URL(file, SCRIPT_SRC).href;
      var settle = function (error) {
        delete pending[file];
        waiting.forEach(function (callbacks) {
          if (error) callbacks.failed(error);
          else if (ready()) callbacks.done();
          else callbacks.failed(file + " did not define the finder's data");
        });
      };
      script.onload = function () {
        settle(null);
      };
      script.onerror = function () {
        settle("cannot load " + script.src);
      };
      document.head.appendChild(script);
    }
    waiting.push({ done: done, failed: failed });
  }

  function loadIndex(done, failed) {
    loadScript(INDEX_FILE, function () {
      return Array.isArray(window[INDEX_GLOBAL]) && window[INDEX_GLOBAL].length > 0;
    }, function () {
      done(window[INDEX_GLOBAL]);
    }, failed);
  }

  // The entry's model menu option of `value`, else its initial one.
  function modelOf(entry, value) {
    return entry.models.find(function (model) {
      return model.value === value;
    }) || entry.models.find(function (model) {
      return model.value === entry.initial_model;
    }) || entry.models[0];
  }

  function loadPart(entry, model, done, failed) {
    var key = entry.release + "/" + model.value;
    var has = function () {
      return Boolean(window[DATA_GLOBAL] && window[DATA_GLOBAL][key]);
    };
    loadScript(model.file, has, function () {
      var data = window[DATA_GLOBAL][key];
      if (!data.pairPrefills) prepare(data);
      done(data);
    }, failed);
  }

  // Per-data lookups computed once: the prefill backends that have pair columns.
  function prepare(data) {
    data.textCache = [];
    data.pairPrefills = [];
    data.columns.forEach(function (column) {
      if (column[0] >= 0 && data.pairPrefills.indexOf(column[0]) < 0) data.pairPrefills.push(column[0]);
    });
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

  function writeHash(data, selects, prefillSelect) {
    var parts = ["release=" + encodeURIComponent(data.release), "model=" + encodeURIComponent(data.model)];
    parts = parts.concat(data.axes.map(function (axis, i) {
      return encodeURIComponent(axis.id) + "=" + encodeURIComponent(selects[i].value);
    }));
    if (prefillSelect.value !== "") parts.push("prefill=" + data.backends[Number(prefillSelect.value)]);
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#" + parts.join("&"));
    }
  }

  // Fills the menus from one release's data, keeping each current choice the release offers
  // (else the hash's, else the release's initial one).
  function setUpMenus(form, data, keep) {
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
      var offered = function (value) {
        return axis.options.some(function (option) {
          return option.value === value;
        });
      };
      var previous = keep ? keep[axis.id] : undefined;
      if (previous !== undefined && offered(previous)) select.value = previous;
      else select.value = offered(wanted[axis.id]) ? wanted[axis.id] : axis.initial;
      return select;
    });
  }

  // The data's numbers: base 64 in data.digits, `width` digits each (data.widths[table]).
  function numberAt(data, text, position, width) {
    var value = 0;
    for (var i = 0; i < width; i++) value = value * 64 + data.digits.indexOf(text.charAt(position + i));
    return value;
  }

  function numbersOf(data, text, width) {
    var numbers = [];
    for (var i = 0; i < text.length; i += width) numbers.push(numberAt(data, text, i, width));
    return numbers;
  }

  function optionOf(axis, select) {
    return axis.options.find(function (option) {
      return option.value === select.value;
    }) || axis.options[0];
  }

  // The combination's index: mixed radix over hardware class, dtype, page size and topk,
  // the last varying fastest (one data file holds one model's). A GPU option names its
  // hardware class.
  function combinationIndex(data, selects) {
    var index = 0;
    data.axes.forEach(function (axis, i) {
      var option = optionOf(axis, selects[i]);
      if (axis.id === "gpu") {
        index = index * data.hardware + option.hw;
      } else {
        index = index * axis.options.length + axis.options.indexOf(option);
      }
    });
    return index;
  }

  // The selected GPU's hardware class (its number in the data).
  function hardwareOf(data, selects) {
    var at = data.axes.findIndex(function (axis) {
      return axis.id === "gpu";
    });
    return optionOf(data.axes[at], selects[at]).hw;
  }

  // After a GPU change: where nothing passes with the chosen KV dtype on the new GPU, the
  // dtype moves to the first on which SGLang's default launch passes there (the build's
  // `kv_follow`, for this page size and top-k); the note says so, or says that no dtype can.
  function followDtype(data, selects, rows) {
    var passing = rows.some(function (row) {
      return row.verdict !== "incompatible";
    });
    if (passing) return false;
    var at = {};
    data.axes.forEach(function (axis, i) {
      at[axis.id] = i;
    });
    var kvAxis = data.axes[at.kv_cache_dtype];
    var kvSelect = selects[at.kv_cache_dtype];
    var gpuSelect = selects[at.gpu];
    var block = (hardwareOf(data, selects) * data.axes[at.page_size].options.length +
      data.axes[at.page_size].options.indexOf(optionOf(data.axes[at.page_size], selects[at.page_size]))) *
      data.axes[at.topk].options.length + data.axes[at.topk].options.indexOf(optionOf(data.axes[at.topk], selects[at.topk]));
    var blocks = data.hardware * data.axes[at.page_size].options.length * data.axes[at.topk].options.length;
    var w = data.kv_follow.length / blocks;
    var target = kvAxis.options[numberAt(data, data.kv_follow, block * w, w)];
    var was = kvSelect.value;
    var gpu = gpuSelect.options[gpuSelect.selectedIndex].textContent;
    var note = element("p", "compat-finder-followed");
    if (target && target.value !== was) {
      kvSelect.value = target.value;
      note.dataset.from = was;
      note.dataset.to = target.value;
      note.textContent = "No backend runs a " + was + " KV cache on " + gpu + " with these choices: " +
        "the KV-cache dtype moved to " + target.value + ", the first on which SGLang's default launch passes here.";
    } else {
      note.dataset.from = was;
      note.dataset.to = "";
      note.textContent = "No backend runs a " + was + " KV cache on " + gpu + " with these choices, and " +
        "no KV-cache dtype lets SGLang's default launch pass here: each row below says why.";
    }
    return note;
  }

  function selectedArgs(data, selects, model) {
    return [model.args].concat(data.axes.map(function (axis, i) {
      return optionOf(axis, selects[i]).args;
    }))
      .filter(Boolean)
      .join(" ");
  }

  // A text of the data: its word numbers (data.widths.word digits each), words joined.
  function text(data, number) {
    var known = data.textCache[number];
    if (known === undefined) {
      known = numbersOf(data, data.texts[number], data.widths.word).map(function (word) {
        return data.words[word];
      }).join("");
      data.textCache[number] = known;
    }
    return known;
  }

  // A finding: its severity's digit, then its rule, message and phases as text numbers.
  function findingAt(data, id) {
    var w = data.widths.text;
    var at = id * (1 + 3 * w);
    return {
      severity: data.severities[numberAt(data, data.findings, at, 1)],
      rule: text(data, numberAt(data, data.findings, at + 1, w)),
      message: text(data, numberAt(data, data.findings, at + 1 + w, w)),
      phases: text(data, numberAt(data, data.findings, at + 1 + 2 * w, w)),
    };
  }

  function reasonItem(data, findingId, phaseNotes) {
    var finding = findingAt(data, findingId);
    var severity = finding.severity;
    var phases = finding.phases;
    var item = element("li", "compat-finder-reason compat-finder-" + severity);
    item.dataset.rule = finding.rule;
    item.dataset.severity = severity;
    item.appendChild(element("span", "compat-finder-glyph", SEVERITY_GLYPH[severity] + " "));
    item.appendChild(element("code", "compat-finder-rule", finding.rule));
    if (phaseNotes && phases && phases.indexOf("+") < 0) {
      item.appendChild(document.createTextNode(" "));
      item.appendChild(element("span", "compat-finder-phase", phases + " only"));
    }
    item.appendChild(document.createTextNode(" " + finding.message));
    return item;
  }

  // One cell, as compat.publish.finder.finder_data lays it out: the combination's block
  // holds, per column, a group: the finding ids every cell of the block shares, a set per
  // page size, a set per topk, a set per cell, and each cell's verdict digit. The cell's
  // findings are the union of its four sets, in id order (the ids are numbered in the
  // order the guard reports them).
  function outcomeAt(data, index, column) {
    var w = data.widths;
    var block = Math.floor(index / data.block);
    var position = index % data.block;
    var page = Math.floor(position / data.topks);
    var topk = position % data.topks;
    var group = data.groups[numberAt(data, data.results, (block * data.columns.length + column) * w.group, w.group)];
    var at = 0;
    var read = function (width) {
      var value = numberAt(data, group, at, width);
      at += width;
      return value;
    };
    var shared = read(w.set);
    var byPage = data.tuples[read(w.tuple)];
    var byTopk = data.tuples[read(w.tuple)];
    var own = data.tuples[read(w.tuple)];
    var pattern = data.patterns[read(w.pattern)];
    var seen = {};
    var ids = [];
    [shared, numberAt(data, byPage, page * w.set, w.set), numberAt(data, byTopk, topk * w.set, w.set),
      numberAt(data, own, position * w.set, w.set)].forEach(function (set) {
      numbersOf(data, data.sets[set], w.finding).forEach(function (id) {
        if (!seen[id]) {
          seen[id] = true;
          ids.push(id);
        }
      });
    });
    ids.sort(function (x, y) {
      return x - y;
    });
    return { rank: Number(pattern.charAt(position)), ids: ids };
  }

  // The guard's fixes for the default launch where no backend passes, else null.
  function fixesAt(data, index) {
    var w = data.widths.fixes;
    var number = numberAt(data, data.fixes, index * w, w);
    return number ? data.fixlists[number - 1] : null;
  }

  function reasonList(data, ids, phaseNotes) {
    var list = element("ul");
    ids.forEach(function (id) {
      list.appendChild(reasonItem(data, id, phaseNotes));
    });
    return list;
  }

  function render(data, model, selects, prefillSelect, output, command) {
    var index = combinationIndex(data, selects);
    var digits = data.defaults.substr(index * 2, 2);
    var prefill = data.backends[data.digits.indexOf(digits.charAt(0))] || null;
    var decode = data.backends[data.digits.indexOf(digits.charAt(1))] || null;
    var chosen = prefillSelect.value === "" ? -1 : Number(prefillSelect.value);
    var pairIndex = data.pairPrefills.indexOf(chosen);
    var refused = pairIndex >= 0 && data.refused.charAt(index * data.pairPrefills.length + pairIndex) === "1";
    var rows = [];
    data.columns.forEach(function (column, c) {
      if (column[0] !== chosen) return;
      var outcome = outcomeAt(data, index, c);
      var name = data.backends[column[1]];
      rows.push({
        name: name, b: column[1], rank: outcome.rank, ids: outcome.ids,
        verdict: data.verdicts[outcome.rank], isDefault: chosen < 0 && (name === prefill || name === decode),
        // SGLang's pick, tagged once: by phase where it picks two backends.
        tag: chosen >= 0 ? "" : prefill === decode ? (name === decode ? "default" : "")
          : name === prefill ? "default prefill" : name === decode ? "default decode" : "",
        foreign: data.foreign[hardwareOf(data, selects)].indexOf(column[1]) >= 0 && outcome.rank === 2,
      });
    });
    // Most useful first: compatible, then with warnings, then incompatible; SGLang's own
    // default first within a verdict, other platforms' backends last, then the matrix's
    // order (the command names the first row).
    rows.sort(function (x, y) {
      return x.rank - y.rank || (y.isDefault ? 1 : 0) - (x.isDefault ? 1 : 0) ||
        (x.foreign ? 1 : 0) - (y.foreign ? 1 : 0) || x.b - y.b;
    });

    output.textContent = "";
    var counts = {};
    rows.forEach(function (row) {
      counts[row.verdict] = (counts[row.verdict] || 0) + 1;
    });
    var summary = output.appendChild(element("p", "compat-finder-summary"));
    if (refused) {
      summary.appendChild(document.createTextNode("\u274C Prefill on "));
      summary.appendChild(element("code", null, data.backends[chosen]));
      summary.appendChild(document.createTextNode(" is refused here, whatever the decode backend:"));
      output.appendChild(reasonList(data, rows[0].ids, false)).className = "compat-finder-refused";
    } else {
      summary.appendChild(
        document.createTextNode(
          (chosen >= 0 ? "Decode backends with prefill on " + data.backends[chosen] + ": " : "") +
            data.verdicts
              .map(function (verdict) {
                return VERDICT_VIEW[verdict].glyph + " " + (counts[verdict] || 0) + " " + VERDICT_VIEW[verdict].text;
              })
              .join(" \u00B7 ") + ". "
        )
      );
      if (chosen < 0 && (prefill || decode)) {
        summary.appendChild(document.createTextNode("Without a backend flag, SGLang picks "));
        summary.appendChild(element("code", null, prefill === decode ? prefill : prefill + " + " + decode));
        summary.appendChild(document.createTextNode("."));
      }
    }
    var fixes = fixesAt(data, index);
    var nonePasses = rows.every(function (row) {
      return row.verdict === "incompatible";
    });
    if (chosen < 0 && nonePasses && !data.fix_search) {
      // A named model's rows carry no fix search (it would double the site's build); the
      // command below runs it.
      output.appendChild(element("p", "compat-finder-fixes-intro", "No backend passes as selected. The command below prints the fixes the guard checked for this model."));
    }
    if (chosen < 0 && fixes && fixes.length) {
      // How the fixes are ordered is the guard's own sentence (compat check says the same).
      output.appendChild(element("p", "compat-finder-fixes-intro", "No backend passes as selected. Fixes the guard checked for SGLang's default launch (" + data.fix_order + "):"));
      var fixList = output.appendChild(element("ul", "compat-finder-fixes"));
      fixes.forEach(function (fix) {
        var item = fixList.appendChild(element("li", "compat-finder-fix"));
        item.appendChild(element("code", null, text(data, fix[0])));
        item.appendChild(document.createTextNode(" \u2014 " + text(data, fix[1])));
      });
    }

    var best = refused ? null : rows[0];
    if (command) {
      var flags = chosen >= 0
        ? "--prefill-attention-backend " + data.backends[chosen] + (best ? " --decode-attention-backend " + best.name : "")
        : best ? "--attention-backend " + best.name : "";
      var release = "--sglang-version " + data.release + " ";
      command.textContent = (
        "compat check " + release + selectedArgs(data, selects, model) + " " + flags
      ).trim();
    }
    if (!refused) {
      var own = rows.filter(function (row) {
        return !row.foreign;
      });
      var foreign = rows.filter(function (row) {
        return row.foreign;
      });
      output.appendChild(element("div", "compat-finder-scroll")).appendChild(table(data, own, chosen));
      if (foreign.length) {
        // Backends of other platforms: one line, their reasons a click away.
        var fold = output.appendChild(element("details", "compat-finder-foreign"));
        fold.appendChild(element("summary", null, "not for this platform (" + foreign.length + ")"));
        fold.appendChild(element("div", "compat-finder-scroll")).appendChild(table(data, foreign, chosen));
      }
    }
    output.dataset.combination = String(index);
    output.dataset.prefill = chosen < 0 ? "" : data.backends[chosen];
    // SGLang's own choice without a backend flag: "prefill decode" ("" where it has none).
    output.dataset.defaults = (prefill || "") + " " + (decode || "");
    return rows;
  }

  // The table of `rows`: a backend (or decode backend) each, its verdict and reasons.
  function table(data, rows, chosen) {
    var table = element("table", "compat-finder-table");
    var head = table.appendChild(element("thead")).appendChild(element("tr"));
    [chosen >= 0 ? "Decode backend" : "Backend", "Verdict", "Reasons"].forEach(function (title) {
      head.appendChild(element("th", null, title));
    });
    var body = table.appendChild(element("tbody"));
    rows.forEach(function (row) {
      var tr = body.appendChild(element("tr", "compat-finder-row compat-finder-" + row.verdict));
      tr.dataset.backend = row.name;
      tr.dataset.verdict = row.verdict;
      var name = tr.appendChild(element("td", "compat-finder-backend"));
      name.appendChild(element("code", null, row.name));
      if (row.tag) {
        name.appendChild(document.createTextNode(" "));
        name.appendChild(element("span", "compat-finder-default", row.tag));
      }
      var view = VERDICT_VIEW[row.verdict];
      var verdict = tr.appendChild(element("td", "compat-finder-verdict"));
      verdict.appendChild(element("span", "compat-finder-glyph", view.glyph));
      verdict.appendChild(document.createTextNode(" " + view.text));
      var reasons = tr.appendChild(element("td", "compat-finder-reasons"));
      if (row.ids.length === 0) reasons.appendChild(element("span", "compat-finder-none", "no findings"));
      else reasons.appendChild(reasonList(data, row.ids, chosen < 0));
    });
    return table;
  }

  function setUpPrefill(data, select, keep) {
    select.textContent = "";
    select.appendChild(element("option", null, "same backend for both phases")).value = "";
    data.pairPrefills.forEach(function (b) {
      select.appendChild(element("option", null, data.backends[b])).value = String(b);
    });
    var wanted = keep !== undefined ? keep : readHash().prefill;
    var known = data.pairPrefills.some(function (b) {
      return data.backends[b] === wanted;
    });
    select.value = known ? String(data.backends.indexOf(wanted)) : "";
  }

  function setUpModels(select, entry, keep) {
    select.textContent = "";
    entry.models.forEach(function (model) {
      select.appendChild(element("option", null, model.label)).value = model.value;
    });
    select.value = modelOf(entry, keep !== undefined ? keep : readHash().model).value;
  }

  function setUpReleases(select, index) {
    select.textContent = "";
    index.forEach(function (entry) {
      select.appendChild(element("option", null, "SGLang " + entry.release)).value = entry.release;
    });
    var wanted = readHash().release;
    var known = index.some(function (entry) {
      return entry.release === wanted;
    });
    select.value = known ? wanted : index[0].release;
  }

  function init() {
    var form = document.getElementById("compat-finder");
    var output = document.getElementById("compat-finder-results");
    if (!form || !output || form.dataset.ready) return;
    form.dataset.ready = "loading";
    var fail = function (message) {
      output.textContent = "The finder cannot start: " + message;
    };
    var releaseSelect = form.querySelector("select[data-release]");
    var modelSelect = form.querySelector("select[data-model]");
    var prefillSelect = form.querySelector("select[data-prefill]");
    // The architecture the chosen model is judged as, under its menu: the menu's own
    // labels stay short enough for a phone.
    var modelNote = form.querySelector("[data-model-note]");
    if (!releaseSelect || !modelSelect || !prefillSelect) {
      fail("the page has no release, model or prefill menu");
      return;
    }
    // The page's one code block: Material gives it a copy button, which copies the
    // text as it is when clicked, so the command below always matches the menus.
    var command = document.querySelector(".md-content .highlight code");
    var current = null;
    var currentModel = null;
    var selects = [];
    // The URL is written once per burst of changes, after them: each history.replaceState
    // costs twice the render itself (measured in Chromium: 2.8 ms an update with it, 0.9
    // without), and a burst (a restored form, a script driving the menus) needs only the last.
    var hashPending = false;
    var writeHashSoon = function () {
      if (hashPending) return;
      hashPending = true;
      setTimeout(function () {
        hashPending = false;
        if (current) writeHash(current, selects, prefillSelect);
      }, 0);
    };
    var update = function (event) {
      if (!current) return;
      var rows = render(current, currentModel, selects, prefillSelect, output, command);
      var gpuChanged = event && event.target && event.target.dataset.axis === "gpu";
      var note = gpuChanged && prefillSelect.value === "" && followDtype(current, selects, rows);
      if (note) {
        if (note.dataset.to) render(current, currentModel, selects, prefillSelect, output, command);
        output.insertBefore(note, output.firstChild);
      }
      writeHashSoon();
    };
    // Shows one release and model: loads its data if needed, then refills the menus from it.
    var show = function (entry, first) {
      var keep = {};
      selects.forEach(function (select) {
        keep[select.dataset.axis] = select.value;
      });
      var prefill = current && prefillSelect.value !== "" ? current.backends[Number(prefillSelect.value)] : "";
      form.dataset.ready = "loading";
      setUpModels(modelSelect, entry, first ? undefined : modelSelect.value);
      var model = modelOf(entry, modelSelect.value);
      loadPart(entry, model, function (data) {
        // Another release or model was picked meanwhile.
        if (releaseSelect.value !== data.release || modelSelect.value !== data.model) return;
        try {
          selects = setUpMenus(form, data, first ? null : keep);
          setUpPrefill(data, prefillSelect, first ? undefined : prefill);
        } catch (error) {
          fail(error.message);
          return;
        }
        current = data;
        currentModel = model;
        if (modelNote) modelNote.textContent = model.note || "";
        update();
        var now = String(Math.round(performance.now()));
        if (first) output.dataset.firstVerdictMs = now;
        output.dataset.shownMs = now; // when this release's verdicts were shown
        output.dataset.release = data.release;
        output.dataset.model = data.model;
        form.dataset.ready = "true";
      }, fail);
    };
    loadIndex(function (index) {
      setUpReleases(releaseSelect, index);
      form.querySelectorAll("select[data-axis]").forEach(function (select) {
        select.addEventListener("change", update);
      });
      prefillSelect.addEventListener("change", update);
      var showSelected = function () {
        var entry = index.find(function (e) {
          return e.release === releaseSelect.value;
        });
        if (entry) show(entry, false);
      };
      releaseSelect.addEventListener("change", showSelected);
      modelSelect.addEventListener("change", showSelected);
      form.addEventListener("submit", function (event) {
        event.preventDefault();
      });
      show(index.find(function (e) {
        return e.release === releaseSelect.value;
      }), true);
    }, fail);
  }

  // On the finder's page (its form is above this script), start loading the release index
  // and the release to show right away, while the rest of the page loads: the first verdict
  // then follows DOMContentLoaded without waiting for two more requests.
  function loadEarly() {
    if (!document.getElementById("compat-finder")) return;
    var ignore = function () {};
    loadIndex(function (index) {
      var wanted = readHash();
      var entry = index.find(function (e) {
        return e.release === wanted.release;
      }) || index[0];
      loadPart(entry, modelOf(entry, wanted.model), ignore, ignore);
    }, ignore);
  }

  loadEarly();
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
