// A dialog hands the focus back to what had it before the dialog opened. Radix does so
// for a dialog opened by its own trigger; one that the page opens from its state (a
// reason to give, a save to confirm: portal/components/confirm.py) has no trigger, and
// the focus would fall to the page's start when it closes. This puts it back.
(function () {
  const DIALOG = '[role="dialog"], [role="alertdialog"]';
  let lastOutside = null; // the last element focused outside any dialog
  let opener = null; // what had the focus when the open dialog opened
  let open = false;

  document.addEventListener("focusin", (event) => {
    if (event.target instanceof Element && !event.target.closest(DIALOG)) {
      lastOutside = event.target;
    }
  }, true);

  function handBack() {
    const lost = !document.activeElement || document.activeElement === document.body;
    if (lost && !document.querySelector(DIALOG) && opener && opener.isConnected) {
      opener.focus();
    }
  }

  new MutationObserver(() => {
    const now = document.querySelector(DIALOG) !== null;
    if (now && !open) opener = lastOutside;
    // Radix moves the focus itself, when it does, once the dialog is gone: look after it.
    if (!now && open) setTimeout(handBack, 50);
    open = now;
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
