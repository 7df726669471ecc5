// Copy buttons of the Senders page: each copies its record's value (the value is also
// shown as text, so the page works without this script).
document.addEventListener("click", function (event) {
  var button = event.target.closest("button[data-copy]");
  if (!button || !navigator.clipboard) { return; }
  navigator.clipboard.writeText(button.getAttribute("data-copy")).then(function () {
    button.textContent = "Copied";
    setTimeout(function () { button.textContent = "Copy"; }, 2000);
  });
});
