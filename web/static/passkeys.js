/* Passkeys (WebAuthn): `Add a passkey` on the Account page and `Sign in with a passkey` on
 * the sign-in page. Both are rendered hidden and shown here when the browser has WebAuthn,
 * so a page without it shows no button that would do nothing. The server makes the
 * options, keeps the challenge and checks the answer (engine/people/passkeys.py); this file
 * only carries them between the server and navigator.credentials.
 *   form[data-passkey-register]  posts {name, credential} to its action
 *   button[data-passkey-sign-in] posts {credential} to its data-action
 * Each names its options URL in data-options and its message element in data-status.
 */
(function () {
  "use strict";

  function csrf() {
    var headers = document.body.getAttribute("hx-headers") || "{}";
    try { return JSON.parse(headers)["X-CSRFToken"] || ""; } catch (e) { return ""; }
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrf()},
      body: JSON.stringify(body || {})
    }).then(function (response) {
      return response.json().then(function (data) {
        if (!response.ok) throw new Error(data.error || "The request was refused.");
        return data;
      }, function () { throw new Error("The server answered " + response.status + "."); });
    });
  }

  function bytes(text) {
    var b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(b64 + "===".slice((b64.length + 3) % 4));
    return Uint8Array.from(raw, function (c) { return c.charCodeAt(0); });
  }

  function text(buffer) {
    var raw = String.fromCharCode.apply(null, new Uint8Array(buffer));
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function creationOptions(json) {
    if (PublicKeyCredential.parseCreationOptionsFromJSON) {
      return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    }
    json.challenge = bytes(json.challenge);
    json.user.id = bytes(json.user.id);
    (json.excludeCredentials || []).forEach(function (c) { c.id = bytes(c.id); });
    return json;
  }

  function requestOptions(json) {
    if (PublicKeyCredential.parseRequestOptionsFromJSON) {
      return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    }
    json.challenge = bytes(json.challenge);
    (json.allowCredentials || []).forEach(function (c) { c.id = bytes(c.id); });
    return json;
  }

  function asJSON(credential) {
    if (credential.toJSON) return credential.toJSON();
    var r = credential.response, response = {clientDataJSON: text(r.clientDataJSON)};
    if (r.attestationObject) {
      response.attestationObject = text(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    } else {
      response.authenticatorData = text(r.authenticatorData);
      response.signature = text(r.signature);
      if (r.userHandle) response.userHandle = text(r.userHandle);
    }
    return {id: credential.id, rawId: text(credential.rawId), type: credential.type,
            response: response, clientExtensionResults: {},
            authenticatorAttachment: credential.authenticatorAttachment};
  }

  function go(url) {
    var target = new URL(url, window.location.href);
    if (target.pathname === window.location.pathname &&
        target.search === window.location.search) {
      window.location.hash = target.hash;  // the same page: a hash alone would not load it
      window.location.reload();
    } else {
      window.location.assign(target.href);
    }
  }

  function say(element, message) {
    var status = document.getElementById(element.getAttribute("data-status"));
    if (status) { status.textContent = message; status.hidden = !message; }
  }

  function failed(element, error) {
    var message = error && error.name === "NotAllowedError"
      ? "The passkey request was cancelled or timed out. Try again."
      : (error && error.message) || "The passkey request failed.";
    say(element, message);
  }

  function register(form) {
    var name = form.querySelector("input[name=name]");
    say(form, "");
    if (!name.value.trim()) {
      name.setAttribute("aria-invalid", "true");
      say(form, "Name the passkey, so you can tell it from others later.");
      name.focus();
      return;
    }
    name.removeAttribute("aria-invalid");
    post(form.getAttribute("data-options")).then(function (options) {
      return navigator.credentials.create({publicKey: creationOptions(options)});
    }).then(function (credential) {
      return post(form.getAttribute("action"), {name: name.value, credential: asJSON(credential)});
    }).then(function (done) { go(done.redirect); },
            function (error) { failed(form, error); });
  }

  function signIn(button) {
    say(button, "");
    post(button.getAttribute("data-options")).then(function (options) {
      return navigator.credentials.get({publicKey: requestOptions(options)});
    }).then(function (credential) {
      return post(button.getAttribute("data-action"), {credential: asJSON(credential)});
    }).then(function (done) { go(done.redirect); },
            function (error) { failed(button, error); });
  }

  function start() {
    if (!window.PublicKeyCredential || !navigator.credentials) return;
    document.querySelectorAll("[data-passkey-register], [data-passkey-sign-in]").forEach(
      function (element) { element.hidden = false; });
    document.querySelectorAll("[data-passkey-unsupported]").forEach(
      function (element) { element.hidden = true; });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target.closest("form[data-passkey-register]");
    if (!form) return;
    event.preventDefault();
    register(form);
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-passkey-sign-in]");
    if (!button) return;
    event.preventDefault();
    signIn(button);
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
