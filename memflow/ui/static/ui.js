// memflow ui: the only script of the pages (no inline scripts or handlers: see the CSP header).
// Expands and collapses an episode's tree; everything else works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-tree]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-tree") === "open";
      document.querySelectorAll("#tree details").forEach(function (d) {
        d.open = open || d.parentElement.getAttribute("data-kind") === "Episode";
      });
    });
  });
});
