// Before leaving a page with a form typed into and not submitted, ask first.
// A form opts in with the attribute data-unsaved-guard. Typing marks it changed,
// submitting clears the mark; leaving by a link or by closing or reloading the tab then
// asks the browser's "leave this page?" question.
(function () {
  const changed = new Set();
  const QUESTION = "You have unsaved changes. Leave this page and lose them?";

  function guardedForm(target) {
    return target instanceof Element ? target.closest("form[data-unsaved-guard]") : null;
  }

  function pending() {
    for (const form of changed) if (!form.isConnected) changed.delete(form);
    return changed.size > 0;
  }

  document.addEventListener("input", (event) => {
    const form = guardedForm(event.target);
    if (form) changed.add(form);
  }, true);
  document.addEventListener("submit", (event) => {
    const form = guardedForm(event.target);
    if (form) changed.delete(form);
  }, true);

  window.addEventListener("beforeunload", (event) => {
    if (pending()) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // Links inside the portal change pages without unloading it: ask on the click, before
  // the router sees it (capture phase on the window runs first).
  window.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!link || link.target === "_blank" || !pending()) return;
    const to = new URL(link.href, location.href);
    if (to.pathname === location.pathname && to.search === location.search) return;
    if (window.confirm(QUESTION)) {
      changed.clear();
    } else {
      event.preventDefault();
      event.stopPropagation();
    }
  }, true);
})();
