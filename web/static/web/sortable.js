/* Sortable tables: a header with data-sort ("num" or "text") holds a button that sorts the
 * rows by that column's data-value (or text); a second press reverses the order. The
 * header cell keeps its role (a column header), its aria-sort says the order. */
(function () {
  "use strict";
  for (const table of document.querySelectorAll("table.sortable")) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach((th, column) => {
      const kind = th.dataset.sort;
      if (!kind) return;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort-button";
      button.append(...th.childNodes);
      th.append(button);
      const sort = () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).filter((row) => row.cells.length === headers.length);
        const key = (row) => {
          const cell = row.cells[column];
          const raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
          return kind === "num" ? parseFloat(raw) : raw.toLowerCase();
        };
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          const order = kind === "num" ? x - y : x < y ? -1 : x > y ? 1 : 0;
          return ascending ? order : -order;
        });
        body.append(...rows);
      };
      button.addEventListener("click", sort);
    });
  }
})();
