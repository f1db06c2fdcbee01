// Progressive enhancement only: every page works without this file.
"use strict";
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) {
    event.preventDefault();
    return;
  }
  // One submit per click: a double click must not write two versions.
  for (const button of form.querySelectorAll("button[type=submit]")) {
    button.disabled = true;
  }
});
