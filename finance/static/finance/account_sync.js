// The account page's "Sync now": start a sync, poll its status, then refresh the page's parts.
(function () {
  "use strict";
  const DONE = ["completed", "failed"];
  function start() {
    const form = document.getElementById("sync-now-form");
    if (!form) return;
    const button = document.getElementById("sync-now");
    const progress = document.getElementById("sync-progress");
    const token = form.querySelector("input[name=csrfmiddlewaretoken]").value;

    function show(status) {
      const badge = document.getElementById("sync-status");
      if (badge) {
        badge.textContent = status.status_text || status.status;
        badge.className = "pf-badge pf-status-" + status.status;
      }
      const health = document.getElementById("connection-health");
      if (health && status.health) {
        health.textContent = status.health_text;
        health.className = "pf-badge pf-status-" + status.health;
      }
      const time = document.getElementById("sync-time");
      if (time && status.finished_text) time.textContent = status.finished_text;
    }

    function finish(status) {
      show(status);
      const box = document.getElementById("latest-transactions-box");
      if (box && status.transactions_html !== undefined) box.innerHTML = status.transactions_html;
      const balance = document.getElementById("account-balance");
      if (balance && status.balance_text) balance.textContent = status.balance_text;
      const stats = status.stats || {};
      const created = stats.transactions_added || 0;
      const updated = stats.transactions_updated || 0;
      progress.textContent = status.status === "completed"
        ? "Sync completed: " + created + " new, " + updated + " updated."
        : "Sync failed: " + (status.error || "unknown error");
      progress.className = status.status === "completed" ? "pf-amount-in" : "pf-neg";
      button.disabled = false;
    }

    function poll(url, tries) {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then((r) => r.json())
        .then((status) => {
          if (DONE.includes(status.status) || tries > 600) return finish(status);
          show(status);
          progress.textContent = "Syncing…";
          setTimeout(() => poll(url, tries + 1), 1000);
        })
        .catch(() => setTimeout(() => poll(url, tries + 1), 2000));
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      button.disabled = true;
      progress.className = "pf-muted";
      progress.textContent = "Starting sync…";
      fetch(form.action, {
        method: "POST",
        headers: { Accept: "application/json", "X-CSRFToken": token },
        credentials: "same-origin",
      })
        .then((r) => r.json().then((body) => ({ ok: r.ok, body: body })))
        .then(({ ok, body }) => {
          if (!ok) {
            progress.textContent = body.message || "The sync could not start.";
            progress.className = "pf-neg";
            button.disabled = false;
            return;
          }
          poll(form.dataset.statusUrl + "?sync=" + encodeURIComponent(body.id), 0);
        })
        .catch(() => { progress.textContent = "The sync could not start."; button.disabled = false; });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
