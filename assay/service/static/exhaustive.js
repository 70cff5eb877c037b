// Exhaustive annotation. Mentions task: a mention is a span [start, end) of the document's
// text, taken from a mouse selection in #doc or, typed, its first occurrence not yet marked;
// Enter adds it, the list is posted as JSON to save a draft or submit. Relations task: keys
// 0-9 pick an option of the current pair and move on, j / k move between pairs.
(function () {
  var $ = function (id) { return document.getElementById(id); };
  function typing(e) {
    var t = e.target && e.target.tagName;
    return t === "INPUT" && e.target.type !== "radio" || t === "TEXTAREA" || t === "SELECT";
  }

  if ($("relations-form")) {
    var tasks = Array.prototype.slice.call(document.querySelectorAll(".pair-task"));
    var cur = 0;
    function show(k) {
      if (!tasks.length) return;
      cur = Math.max(0, Math.min(tasks.length - 1, k));
      tasks.forEach(function (t, i) { t.classList.toggle("current", i === cur); });
      if (tasks[cur].scrollIntoView) tasks[cur].scrollIntoView({block: "nearest"});
    }
    tasks.forEach(function (t, i) { t.addEventListener("click", function () { show(i); }); });
    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e) || !tasks.length) return;
      if (/^[0-9]$/.test(e.key)) {
        var r = tasks[cur].querySelectorAll("input[type=radio]")[+e.key];
        if (!r) return;
        e.preventDefault(); r.checked = true; show(cur + 1);
      } else if (e.key === "j") { e.preventDefault(); show(cur + 1); }
      else if (e.key === "k") { e.preventDefault(); show(cur - 1); }
    });
    show(0);
    return;
  }
  if (!$("mention-form")) return;

  var text = JSON.parse($("doc-text").textContent);
  var mentions = JSON.parse($("draft").textContent);
  var picked = null;                          // the span of the last selection in #doc
  function overlaps(a, b) {
    return mentions.some(function (m) { return m.start < b && a < m.end; });
  }
  function firstFree(s) {
    for (var at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) {
      if (!overlaps(at, at + s.length)) return at;
    }
    return -1;
  }
  function el(tag, cls, txt) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (txt !== undefined) e.textContent = txt;
    return e;
  }
  function redraw() {
    mentions.sort(function (a, b) { return a.start - b.start; });
    var doc = $("doc"), at = 0, nodes = [];
    mentions.forEach(function (m) {
      nodes.push(document.createTextNode(text.slice(at, m.start)));
      var mk = el("mark", "t-" + m.type, m.text);
      mk.appendChild(el("sub", "", m.type));
      nodes.push(mk); at = m.end;
    });
    nodes.push(document.createTextNode(text.slice(at)));
    doc.replaceChildren.apply(doc, nodes);
    $("mentions").replaceChildren.apply($("mentions"), mentions.map(function (m, k) {
      var li = el("li", "", m.text + " [" + m.type + "] " + m.start + "–" + m.end +
                  (m.canonical && m.canonical !== m.text ? " = " + m.canonical : "") +
                  (m.link ? " → " + m.link : ""));
      var b = el("button", "remove", "remove");
      b.type = "button"; b.setAttribute("aria-label", "remove " + m.text);
      b.addEventListener("click", function () { mentions.splice(k, 1); redraw(); });
      li.appendChild(b);
      return li;
    }));
    var names = {};
    mentions.forEach(function (m) { names[m.canonical || m.text] = 1; });
    $("canonicals").replaceChildren.apply($("canonicals"), Object.keys(names).map(function (n) {
      var o = el("option"); o.value = n; return o;
    }));
    $("f-mentions").value = JSON.stringify(mentions);
  }
  function offsetIn(node, offset) {   // characters of the document before (node, offset)
    var r = document.createRange();
    r.selectNodeContents($("doc"));
    r.setEnd(node, offset);
    var f = r.cloneContents();         // without the marks' type labels (sub)
    f.querySelectorAll("sub").forEach(function (s) { s.remove(); });
    return f.textContent.length;
  }
  // a selection in #doc (mouse, shift + arrows, or a long press on a phone) fills the form
  document.addEventListener("selectionchange", function () {
    var sel = window.getSelection();
    if (!sel.rangeCount || sel.isCollapsed) return;
    var r = sel.getRangeAt(0);
    if (!$("doc").contains(r.startContainer) || !$("doc").contains(r.endContainer)) return;
    var start = offsetIn(r.startContainer, r.startOffset);
    var end = offsetIn(r.endContainer, r.endOffset);
    var raw = text.slice(start, end);
    start += raw.length - raw.replace(/^\s+/, "").length;
    end -= raw.length - raw.replace(/\s+$/, "").length;
    if (end <= start) return;
    picked = {start: start, end: end};
    $("m-text").value = text.slice(start, end);
    $("m-span").textContent = "characters " + start + "\u2013" + end;
  });
  $("m-text").addEventListener("input", function () {
    picked = null; $("m-span").textContent = ""; $("m-error").textContent = "";
  });
  function add() {
    var t = $("m-text").value, start, end;
    $("m-error").textContent = "";
    if (!t.trim()) return;
    if (picked && text.slice(picked.start, picked.end) === t) {
      start = picked.start; end = picked.end;
    } else {
      t = t.trim(); start = firstFree(t); end = start + t.length;
      if (start < 0) {
        $("m-error").textContent = "\u201c" + t + "\u201d is not in the text" +
          (text.indexOf(t) >= 0 ? " (every occurrence already marked)" : "");
        return;
      }
    }
    if (overlaps(start, end)) {
      $("m-error").textContent = "that span overlaps a marked mention"; return;
    }
    mentions.push({start: start, end: end, text: text.slice(start, end),
                   type: $("m-type").value, canonical: $("m-canonical").value.trim() ||
                   text.slice(start, end), link: $("m-link").value.trim()});
    picked = null;
    ["m-text", "m-canonical", "m-link"].forEach(function (id) { $(id).value = ""; });
    $("m-span").textContent = "";
    redraw();
    $("m-text").focus();
  }
  $("add-mention").addEventListener("click", add);
  ["m-text", "m-type", "m-canonical", "m-link"].forEach(function (id) {
    $(id).addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); add(); }
    });
  });
  redraw();
})();
