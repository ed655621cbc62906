// The import page: while the import is parsing, publishing or reverting, poll its status and
// show the rows processed; reload the page once it settles so every section is current.
(function () {
  "use strict";
  function start() {
    const box = document.getElementById("import-state");
    if (!box || box.dataset.busy !== "1") return;
    const progress = document.getElementById("import-progress");
    function poll() {
      fetch(box.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then((r) => r.json())
        .then((s) => {
          const busy = s.parsing || s.status === "importing" || s.status === "reverting";
          document.getElementById("import-status").textContent = s.status_text || s.status;
          progress.textContent = busy ? s.rows_processed + " of " + s.rows_to_create + " rows…" : "Done";
          if (busy) setTimeout(poll, 1000); else window.location.reload();
        })
        .catch(() => setTimeout(poll, 2000));
    }
    poll();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
