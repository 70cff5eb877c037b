// Keyboard first: y / n / s / u click the buttons of the item on screen; the buttons'
// hx-sync="#item:drop" and the check below ignore a key pressed while the previous answer is
// still in flight or being swapped in (one answer per item shown). A refused answer or undo
// (a 4xx: 403 flagged, 409 decided or nothing to undo) is the item fragment with its message
// (header X-Assay-Item), swapped in like a 200; other errors are not (htmx's default).
(function () {
  document.addEventListener("htmx:beforeSwap", function (e) {
    var x = e.detail.xhr;
    if (x.status >= 400 && x.status < 500 && x.getResponseHeader("X-Assay-Item") === "1") {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
  });
  var ids = {y: "yes", n: "no", s: "skip", u: "undo"};
  document.addEventListener("keydown", function (e) {
    if (e.repeat || e.ctrlKey || e.metaKey || e.altKey) return;
    if (document.querySelector(".htmx-request, .htmx-settling, .htmx-swapping")) return;
    var t = e.target && e.target.tagName;
    if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") return;
    var id = ids[e.key.toLowerCase()];
    var b = id && document.getElementById(id);
    if (b) { e.preventDefault(); b.click(); }
  });
})();
