/* Live regions: an element with data-refresh="N" and data-url is fetched again every N
 * seconds and its content replaced, while the page is visible. The server answers with
 * the region alone (?partial=1); when the answer no longer asks for refreshing (a
 * tournament that finished), refreshing stops. */
(function () {
  "use strict";
  for (const region of document.querySelectorAll("[data-refresh]")) {
    const seconds = Number(region.dataset.refresh);
    if (!seconds) continue;
    const tick = async () => {
      if (document.visibilityState === "visible") {
        try {
          const response = await fetch(region.dataset.url, { credentials: "same-origin", headers: { Accept: "text/html" } });
          if (response.ok) {
            const html = await response.text();
            region.innerHTML = html;
            if (window.ArenaTables) window.ArenaTables.stack(region);
            if (!region.querySelector("[data-live]")) return;
          }
        } catch (error) {
          /* Offline for a moment: try again at the next tick. */
        }
      }
      window.setTimeout(tick, seconds * 1000);
    };
    window.setTimeout(tick, seconds * 1000);
  }
})();
