// The upload form: once a CSV is chosen, its header line is read in the browser and each
// "... column" field becomes a choice among the file's own column names (the best match
// picked). Nothing is sent until the form is submitted.
(function () {
  "use strict";
  const SEPARATORS = { ",": ",", ";": ";", tab: "\t" };

  function headerLine(text, skip) {
    const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
    return lines[Math.min(skip, Math.max(0, lines.length - 1))] || "";
  }

  function split(line, chosen) {
    let sep = SEPARATORS[chosen];
    if (!sep) {
      const counts = [",", ";", "\t"].map((s) => [s, line.split(s).length]);
      sep = counts.sort((a, b) => b[1] - a[1])[0][0];
    }
    return line.split(sep).map((cell) => cell.trim().replace(/^"(.*)"$/, "$1").trim()).filter(Boolean);
  }

  function toChoice(input, headers) {
    const select = document.createElement("select");
    select.name = input.name;
    select.id = input.id;
    const wanted = (input.value || "").toLowerCase();
    const none = new Option("(none)", "");
    select.add(none);
    let picked = false;
    headers.forEach((name) => {
      const option = new Option(name, name);
      if (!picked && name.toLowerCase() === wanted) { option.selected = true; picked = true; }
      select.add(option);
    });
    if (!picked) none.selected = true;
    input.replaceWith(select);
  }

  function start() {
    const form = document.getElementById("import-upload-form");
    const file = document.getElementById("id_file");
    if (!form || !file || !window.FileReader) return;
    const original = {};
    form.querySelectorAll("[name$='_col_label']").forEach((el) => { original[el.name] = el.outerHTML; });
    file.addEventListener("change", function () {
      const chosen = file.files && file.files[0];
      if (!chosen || !/\.(csv|txt)$/i.test(chosen.name)) return;
      const reader = new FileReader();
      reader.onload = function () {
        const skip = parseInt((form.querySelector("[name=rows_to_skip]") || {}).value || "0", 10) || 0;
        const sep = (form.querySelector("[name=col_sep]") || {}).value || "";
        const headers = split(headerLine(String(reader.result), skip), sep);
        if (headers.length < 2) return;
        Object.keys(original).forEach((name) => {
          const current = form.querySelector("[name='" + name + "']");
          const template = document.createElement("div");
          template.innerHTML = original[name];
          const fresh = template.firstElementChild;
          current.replaceWith(fresh);
          toChoice(fresh, headers);
        });
        const note = document.getElementById("columns-note");
        if (note) note.textContent = "Columns found in " + chosen.name + ": " + headers.join(", ") + ".";
      };
      reader.readAsText(chosen.slice(0, 65536));
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
