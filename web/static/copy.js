/* Copy buttons on every page. Each is rendered hidden and shown here, when the browser can
 * write to the clipboard: without JavaScript no button is shown that would do nothing (the
 * value is on the page as text either way).
 *   data-copy="text"          copies that text
 *   data-copy-from="some-id"  copies that element's value (a textbox) or its text
 * Download buttons, shown the same way where the browser can save a file:
 *   data-download-from="some-id" data-filename="name.txt"  saves that element's value
 */
(function () {
  "use strict";

  function textOf(button) {
    if (button.hasAttribute("data-copy")) return button.getAttribute("data-copy");
    var source = document.getElementById(button.getAttribute("data-copy-from"));
    if (!source) return null;
    return ("value" in source && source.tagName !== "BUTTON" ? source.value
                                                             : source.textContent).trim();
  }

  function start() {
    document.querySelectorAll("button[data-download-from]").forEach(
      function (button) { button.hidden = false; });
    if (!navigator.clipboard) return;
    document.querySelectorAll("button[data-copy], button[data-copy-from]").forEach(
      function (button) { button.hidden = false; });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-download-from]");
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-download-from"));
    if (!source) return;
    var url = URL.createObjectURL(new Blob([source.value.trim() + "\n"],
                                           {type: "text/plain;charset=utf-8"}));
    var link = document.createElement("a");
    link.href = url;
    link.download = button.getAttribute("data-filename") || "download.txt";
    document.body.appendChild(link);
    link.click();
    link.remove();
    window.setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy], button[data-copy-from]");
    var text = button && textOf(button);
    if (text === null || text === undefined || !navigator.clipboard) return;
    navigator.clipboard.writeText(text).then(function () {
      if (!button.heraldLabel) button.heraldLabel = button.textContent;
      button.textContent = "Copied";
      window.setTimeout(function () { button.textContent = button.heraldLabel; }, 1500);
    });
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
