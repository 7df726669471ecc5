/* The template editor's enhancements (loaded from a file: the CSP allows no inline script).
 *
 * - CodeMirror 5 on each textarea marked data-code-editor, with Handlebars highlighting.
 *   The accessible name stays on the element that takes the typing: CodeMirror's own
 *   input gets the field's label (screenReaderLabel, and the <label for> moves to it).
 *   Every change is copied back into the textarea and announced with an "input" event,
 *   so autosave and preview (htmx triggers on the form) see it like any typing.
 * - The autosave status: "Unsaved changes" while typing, "Saving…" during the request,
 *   a clear message when the save fails (the text stays in the editor). "Saved" comes
 *   from the server's answer.
 * - Copy buttons, and template errors of the preview marked on their line.
 * Without JavaScript the same forms work with their buttons.
 */
(function () {
  "use strict";

  var editors = {};

  /* The editor's requests carry its fields as JSON (hx-ext="editor-json"): the server reads
     a 50 KB template in well under a millisecond, where percent-encoding cost ~20 ms. */
  if (window.htmx) {
    window.htmx.defineExtension("editor-json", {
      onEvent: function (name, event) {
        if (name === "htmx:configRequest") {
          event.detail.headers["Content-Type"] = "application/json";
        }
        return true;
      },
      encodeParameters: function (xhr, parameters) {
        var object = {};
        parameters.forEach(function (value, key) {
          if (!Object.prototype.hasOwnProperty.call(object, key)) object[key] = value;
        });
        return JSON.stringify(object);
      }
    });
  }

  function modeFor(kind) {
    if (kind === "html") return { name: "handlebars", base: "text/html" };
    return "handlebars";
  }

  function enhance(textarea) {
    if (!window.CodeMirror) return;
    var label = document.querySelector('label[for="' + textarea.id + '"]');
    var name = label ? label.textContent.trim() : textarea.name;
    var cm = window.CodeMirror.fromTextArea(textarea, {
      mode: modeFor(textarea.getAttribute("data-code-editor")),
      lineNumbers: true,
      lineWrapping: true,
      screenReaderLabel: name,
      viewportMargin: 40
    });
    var input = cm.getInputField();
    input.id = textarea.id + "-code";
    if (label) label.htmlFor = input.id;
    ["aria-describedby", "aria-invalid"].forEach(function (attribute) {
      var value = textarea.getAttribute(attribute);
      if (value) input.setAttribute(attribute, value);
    });
    cm.getWrapperElement().classList.add("code-editor");
    cm.on("change", function () {
      cm.save();
      textarea.dispatchEvent(new Event("input", { bubbles: true }));
    });
    editors[textarea.name] = cm;
  }

  function status(text) {
    var element = document.getElementById("save-status");
    if (element && !document.querySelector("#autosave.conflicted")) element.textContent = text;
  }

  function fromEditor(event) {
    var form = document.getElementById("editor");
    return form && event.detail && event.detail.elt === form;
  }

  function markErrors() {
    Object.keys(editors).forEach(function (name) {
      var cm = editors[name];
      (cm.heraldMarks || []).forEach(function (line) {
        cm.removeLineClass(line, "background", "template-error-line");
      });
      cm.heraldMarks = [];
    });
    document.querySelectorAll("#preview [data-part][data-line]").forEach(function (item) {
      var cm = editors[item.getAttribute("data-part")];
      var line = parseInt(item.getAttribute("data-line"), 10);
      if (!cm || !line) return;
      var handle = cm.addLineClass(line - 1, "background", "template-error-line");
      if (handle) cm.heraldMarks.push(handle);
    });
  }

  function copy(button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    var original = button.textContent;
    navigator.clipboard.writeText(source.textContent.trim()).then(function () {
      button.textContent = "Copied";
      window.setTimeout(function () { button.textContent = original; }, 1500);
    });
  }

  function start() {
    document.querySelectorAll("textarea[data-code-editor]").forEach(enhance);
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      if (navigator.clipboard) button.hidden = false;
      button.addEventListener("click", function () { copy(button); });
    });
    // Typed since the last save began: a save that ends meanwhile is not the last word.
    var typed = false;
    var form = document.getElementById("editor");
    if (form) {
      form.addEventListener("input", function () {
        typed = true;
        status("Unsaved changes");
      });
    }
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      if (!fromEditor(event)) return;
      typed = false;
      status("Saving…");
    });
    document.body.addEventListener("htmx:responseError", function (event) {
      if (fromEditor(event)) {
        status("Not saved: the server answered " + event.detail.xhr.status +
               ". Your text is still here; it is saved with your next change.");
      }
    });
    document.body.addEventListener("htmx:sendError", function (event) {
      if (fromEditor(event)) {
        status("Not saved: the server cannot be reached. Your text is still here; " +
               "it is saved with your next change.");
      }
    });
    document.body.addEventListener("htmx:afterSwap", function (event) {
      var target = event.detail.target;
      if (target && target.id === "preview") markErrors();
      if (fromEditor(event) && typed) status("Unsaved changes");
    });
    markErrors();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
