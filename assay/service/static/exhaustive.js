// Exhaustive annotation of one document: mentions and relations kept here until "finish".
(function () {
  var mentions = [], relations = [];
  var $ = function (id) { return document.getElementById(id); };
  function li(text) { var e = document.createElement("li"); e.textContent = text; return e; }
  function redraw() {
    $("mentions").replaceChildren.apply($("mentions"), mentions.map(function (m) {
      return li(m.text + " [" + m.type + "]" + (m.canonical ? " = " + m.canonical : "") +
                (m.link ? " → " + m.link : ""));
    }));
    ["r-subject", "r-object"].forEach(function (id) {
      $(id).replaceChildren.apply($(id), mentions.map(function (m, k) {
        var o = document.createElement("option"); o.value = k; o.textContent = m.text; return o;
      }));
    });
    $("relations").replaceChildren.apply($("relations"), relations.map(function (r) {
      return li(mentions[r.subject].text + " — " + r.relation + " — " + mentions[r.object].text);
    }));
    $("f-mentions").value = JSON.stringify(mentions);
    $("f-relations").value = JSON.stringify(relations);
  }
  $("doc").addEventListener("mouseup", function () {
    var s = String(window.getSelection()).trim();
    if (s) { $("m-text").value = s; }
  });
  $("add-mention").addEventListener("click", function () {
    var t = $("m-text").value.trim();
    if (!t) return;
    mentions.push({text: t, type: $("m-type").value, canonical: $("m-canonical").value.trim(),
                   link: $("m-link").value.trim()});
    $("m-text").value = ""; $("m-canonical").value = ""; $("m-link").value = "";
    redraw();
  });
  $("add-relation").addEventListener("click", function () {
    var rel = $("r-relation").value.trim();
    if (!rel || !mentions.length) return;
    relations.push({subject: +$("r-subject").value, relation: rel, object: +$("r-object").value});
    $("r-relation").value = "";
    redraw();
  });
})();
