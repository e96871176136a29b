/* Data tables on a phone: below 640 px wide the stylesheet lays each row out as a card
 * (table.stacked), its cells one after another, each after its column's name. This
 * copies each column's header into its cells' data-label for the stylesheet to show, and
 * gives the rows and cells their table roles, which a table laid out as blocks loses. A
 * table without a header (a short list) stays a table. A cross table (.xt) becomes a card
 * per row too, titled by its row's name, each cell labelled "vs" its column's name: a
 * grid of eight bots is 700 px wide, and scrolling it sideways hid whom a score is against. */
(function () {
  "use strict";

  function stack(root) {
    for (const table of root.querySelectorAll("table.data")) {
      if (!table.tHead || !table.tHead.rows.length) continue;
      const cross = table.classList.contains("xt");
      const heads = Array.from(table.tHead.rows[0].cells);
      const names = heads.map((th, i) => {
        const name = th.textContent.replace(/\s+/g, " ").trim();
        // A cross table's corner names the layout, not a column; its row header is the title.
        if (!cross) return name;
        return i === 0 ? "" : "vs " + name;
      });
      table.setAttribute("role", "table");
      for (const row of table.rows) row.setAttribute("role", "row");
      heads.forEach((th) => th.setAttribute("role", "columnheader"));
      for (const body of table.tBodies) {
        for (const row of body.rows) {
          for (const cell of row.cells) {
            cell.setAttribute("role", "cell");
            // A row that spans the columns (nothing yet) has no column name.
            const name = row.cells.length === names.length ? names[cell.cellIndex] : "";
            if (name && !cell.dataset.label) cell.dataset.label = name;
          }
        }
      }
      table.classList.add("stacked");
    }
  }

  // A region that scrolls sideways (a cross table on a phone) takes the keyboard's focus,
  // so that it can be scrolled without a mouse.
  function focusable(root) {
    for (const wrap of root.querySelectorAll(".table-wrap")) {
      if (wrap.scrollWidth > wrap.clientWidth + 1) {
        wrap.tabIndex = 0;
        wrap.setAttribute("role", "region");
        const caption = wrap.closest("section, .panel");
        const title = caption && caption.querySelector("h2, h3");
        wrap.setAttribute("aria-label", title ? title.textContent.trim() : "Table");
      }
    }
  }

  stack(document);
  focusable(document);
  window.ArenaTables = { stack: (root) => { stack(root); focusable(root); } };
})();
