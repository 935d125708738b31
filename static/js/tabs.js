// The placement page's tabs: a link or bookmark to an anchor the page had before it had tabs
// (/placements/<id>/#score-table) opens the tab that now holds that anchor (its link's data-anchors).
(function () {
  "use strict";
  const id = decodeURIComponent(window.location.hash.slice(1));
  if (!id || document.getElementById(id)) return;
  const link = Array.from(document.querySelectorAll(".tabs a[data-anchors]")).find(function (a) {
    return a.dataset.anchors.split(" ").includes(id);
  });
  if (link) window.location.replace(link.href + window.location.hash);
}());
