/* /replays/open/: read a replay file in the browser and hand it to the replay viewer
 * (replay.js, window.ArenaReplay.open). Nothing leaves the browser.
 */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const input = $("replay-file");
  const zone = $("drop-zone");
  const status = $("replay-file-status");

  async function openFile(file) {
    if (!file) return;
    try {
      const data = JSON.parse(await file.text());
      $("viewer").hidden = false;
      window.ArenaReplay.open(data);
      status.textContent = file.name + ": " + (data.steps.length - 1) + " moves.";
      status.dataset.state = "open";
    } catch (error) {
      $("viewer").hidden = true;
      status.textContent = file.name + " could not be opened: " + error.message;
      status.dataset.state = "error";
    }
  }

  input.addEventListener("change", () => openFile(input.files[0]));
  zone.addEventListener("dragover", (event) => { event.preventDefault(); zone.classList.add("dragging"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    openFile(event.dataTransfer.files[0]);
  });
})();
