/* Sortable tables: a click on a header with data-sort ("num" or "text") sorts the rows by
 * that column's data-value (or text), and a second click reverses the order. */
(function () {
  "use strict";
  for (const table of document.querySelectorAll("table.sortable")) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach((th, column) => {
      const kind = th.dataset.sort;
      if (!kind) return;
      th.tabIndex = 0;
      th.setAttribute("role", "button");
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
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); } });
    });
  }
})();
