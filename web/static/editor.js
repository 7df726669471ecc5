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
 * - Tab indents inside a code editor; Escape then Tab (or Shift+Tab) leaves it, as the
 *   field's hint says (WCAG 2.1.2: no keyboard trap).
 * - An autosave goes to the draft whichever submit button has focus (htmx would send it to
 *   that button's formaction, Publish's among them, with the button's value).
 * - No edit is lost: leaving the form saves at once; leaving the page hands the unsaved
 *   text to a keepalive request that outlives the page, and beforeunload warns only when
 *   that cannot carry it (a refused save waiting for a choice, a body over 60 KB).
 * - Template errors of the preview marked on their line (Copy buttons: copy.js).
 * - The select Language shows one language's fields at once, without a page load (its
 *   Show language button is the same without JavaScript); every language's fields stay
 *   in the form, so autosave keeps them all.
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
    // After Escape the next Tab or Shift+Tab is the browser's (false: CodeMirror lets the
    // key through): focus moves on. Any other key, or leaving, makes Tab indent again.
    var leaveKeys = { "Tab": false, "Shift-Tab": false };
    var cm = window.CodeMirror.fromTextArea(textarea, {
      mode: modeFor(textarea.getAttribute("data-code-editor")),
      lineNumbers: true,
      lineWrapping: true,
      screenReaderLabel: name,
      viewportMargin: 40,
      extraKeys: {
        "Esc": function (cm) {
          cm.execCommand("singleSelection");
          cm.removeKeyMap(leaveKeys);
          cm.addKeyMap(leaveKeys);
        }
      }
    });
    cm.on("keydown", function (cm, event) {
      if (["Escape", "Tab", "Shift"].indexOf(event.key) < 0) cm.removeKeyMap(leaveKeys);
    });
    cm.on("blur", function () { cm.removeKeyMap(leaveKeys); });
    var input = cm.getInputField();
    input.id = textarea.id + "-code";
    if (label) label.htmlFor = input.id;
    ["aria-describedby", "aria-invalid"].forEach(function (attribute) {
      var value = textarea.getAttribute(attribute);
      if (value) input.setAttribute(attribute, value);
    });
    var keys = document.getElementById(textarea.id + "-keys");
    if (keys) {
      keys.hidden = false;
      var described = input.getAttribute("aria-describedby");
      input.setAttribute("aria-describedby", (described ? described + " " : "") + keys.id);
    }
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

  function formJson(form) {
    var object = {};
    new FormData(form).forEach(function (value, key) {
      if (!Object.prototype.hasOwnProperty.call(object, key)) object[key] = value;
    });
    return JSON.stringify(object);
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
    } catch (error) {
      return "";
    }
  }

  /* Autosave that loses nothing. `edits` counts changes, `saved` the changes the server has
     (or a keepalive request carries); a change is pending while edits > saved. */
  function guardEdits(form) {
    var edits = 0, saved = 0, handedOver = false;
    var KEEPALIVE_LIMIT = 60000;  // browsers carry at most 64 KiB in keepalive requests
    function pending() { return edits > saved; }
    function conflicted() { return !!document.querySelector("#autosave.conflicted"); }
    function saveNow() { if (window.htmx) window.htmx.trigger(form, "flush-draft"); }

    form.addEventListener("input", function () { edits += 1; });
    // Save draft and Publish post the whole form themselves: nothing to hand over (a second
    // copy racing a publish could only be refused).
    form.addEventListener("submit", function () { saved = edits; });
    document.body.addEventListener("htmx:beforeRequest", function (event) {
      if (fromEditor(event)) event.detail.xhr.heraldEdits = edits;
    });
    // Told from the answer itself: its swap may not have happened yet, and the swapped-out
    // element's events never reach the body. The marker's quotes cannot come from user text
    // (autoescaped).
    var REFUSED = 'id="autosave" class="autosave conflicted"';
    document.body.addEventListener("htmx:afterRequest", function (event) {
      var xhr = event.detail.xhr;
      if (!fromEditor(event) || !event.detail.successful ||
          (xhr.responseText || "").indexOf(REFUSED) >= 0) return;
      saved = Math.max(saved, xhr.heraldEdits || 0);
    });
    // Leaving the form (a link, the preview, another window): save now, not in 800 ms.
    form.addEventListener("focusout", function (event) {
      if (pending() && !conflicted() && !form.contains(event.relatedTarget)) saveNow();
    });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "hidden" && pending() && !conflicted()) saveNow();
    });

    // The page is going: an XHR would be cancelled, a keepalive fetch is not.
    function handOver() {
      if (!pending() || conflicted() || !window.fetch) return false;
      var body = formJson(form);
      if (new Blob([body]).size > KEEPALIVE_LIMIT) return false;
      window.fetch(form.getAttribute("hx-post"), {
        method: "POST", body: body, keepalive: true, credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(),
                   "HX-Request": "true" }
      }).catch(function () {});
      saved = edits;
      handedOver = true;
      return true;
    }
    window.addEventListener("beforeunload", function (event) {
      if (!pending() || handOver()) return;
      event.preventDefault();
      event.returnValue = "";  // the browser's own "Leave site?" question
    });
    window.addEventListener("pagehide", handOver);
    // Back from the browser's cache after a hand-over: the page's basis is stale.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted && handedOver) window.location.reload();
    });
  }

  function switchLanguages() {
    var select = document.querySelector("[data-language-switch]");
    if (!select) return;
    var button = document.querySelector("[data-language-show]");
    if (button) button.hidden = true;
    select.addEventListener("change", function () {
      document.querySelectorAll(".language-group[data-language]").forEach(function (group) {
        group.hidden = group.getAttribute("data-language") !== select.value;
        if (group.hidden) return;
        group.querySelectorAll("textarea[data-code-editor]").forEach(function (textarea) {
          var cm = editors[textarea.name];
          if (cm) cm.refresh();  // laid out while hidden: measure again
        });
      });
    });
  }

  /* htmx sends a form's request to the formaction of the submit button that last had focus,
     with that button's name and value. The editor's own requests (autosave) go where the
     form says and carry no button's choice: an autosave made while Publish had focus must
     not publish, nor one made while "Replace their text with mine" had focus overwrite. */
  function keepAutosaveToTheForm(form) {
    document.body.addEventListener("htmx:configRequest", function (event) {
      if (event.detail.elt !== form) return;
      event.detail.path = form.getAttribute("hx-post");
      event.detail.verb = "post";
      form.querySelectorAll("button[name], input[type=submit][name]").forEach(function (button) {
        delete event.detail.parameters[button.name];
      });
    });
  }

  function start() {
    document.querySelectorAll("textarea[data-code-editor]").forEach(enhance);
    switchLanguages();
    // Typed since the last save began: a save that ends meanwhile is not the last word.
    var typed = false;
    var form = document.getElementById("editor");
    if (form) {
      form.addEventListener("input", function () {
        typed = true;
        status("Unsaved changes");
      });
      guardEdits(form);
      keepAutosaveToTheForm(form);
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
