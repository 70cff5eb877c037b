// Keyboard first: y / n / s / u click the buttons of the item on screen (one request at a time).
(function () {
  var busy = false;
  document.body.addEventListener("htmx:beforeRequest", function () { busy = true; });
  document.body.addEventListener("htmx:afterRequest", function () { busy = false; });
  var ids = {y: "yes", n: "no", s: "skip", u: "undo"};
  document.addEventListener("keydown", function (e) {
    if (e.repeat || busy || e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target && e.target.tagName;
    if (t === "INPUT" || t === "TEXTAREA" || t === "SELECT") return;
    var id = ids[e.key.toLowerCase()];
    var b = id && document.getElementById(id);
    if (b) { e.preventDefault(); b.click(); }
  });
})();
