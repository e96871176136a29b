/* The play lobby: create a match through POST /api/v1/matches/ or take an open seat
 * through POST /api/v1/matches/<id>/join/, then go to the match's play page. */
(function () {
  "use strict";
  const A = window.Arena;
  const config = A.readConfig("lobby-config");
  const bots = A.readConfig("builtin-bots");
  const form = document.getElementById("new-match-form");
  const players = document.getElementById("players");
  const deck = document.getElementById("deck_size");
  const format = document.getElementById("format");
  const seats = document.getElementById("seats");
  const error = document.getElementById("new-match-error");
  const FORMAT_LABEL = { deal: "Single deal", fool: "Series to ДУРАК" };

  function options(select, values, labels, keep) {
    const previous = keep ? select.value : null;
    select.replaceChildren(...values.map((v) => A.el("option", { value: v, text: labels ? labels(v) : v })));
    if (previous && values.map(String).includes(previous)) select.value = previous;
  }

  function game() { return form.querySelector('input[name="game"]:checked'); }

  function refreshSeats() {
    const count = Number(players.value);
    const previous = Array.from(seats.querySelectorAll("select")).map((s) => s.value);
    const rows = [A.el("div", { className: "muted small", text: "Seat 0: you (" + config.username + ")" })];
    for (let i = 1; i < count; i++) {
      const select = A.el("select", { name: "seat" + i, "aria-label": "Seat " + i }, [
        ...bots.map((name) => A.el("option", { value: "bot:" + name, text: "Bot: " + name })),
        A.el("option", { value: "open", text: "Open seat (another person)" }),
      ]);
      if (previous[i - 1]) select.value = previous[i - 1];
      rows.push(A.el("div", { className: "form-grid", style: "grid-template-columns: 4rem 1fr; align-items:center" }, [A.el("span", { className: "small", text: "Seat " + i }), select]));
    }
    seats.replaceChildren(...rows);
  }

  function refreshGame() {
    const chosen = game();
    const range = [];
    for (let n = Number(chosen.dataset.min); n <= Number(chosen.dataset.max); n++) range.push(n);
    options(players, range, (n) => n + " players", true);
    options(deck, chosen.dataset.decks.split(","), (n) => n + " cards", true);
    options(format, chosen.dataset.formats.split(","), (f) => FORMAT_LABEL[f] || f, true);
    refreshSeats();
  }

  form.addEventListener("change", (event) => {
    if (event.target.name === "game") refreshGame();
    if (event.target === players) refreshSeats();
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const button = document.getElementById("start-match");
    button.disabled = true;
    const seatSpecs = [{ user: config.username }];
    for (const select of seats.querySelectorAll("select")) {
      seatSpecs.push(select.value === "open" ? null : { bot: select.value.slice(4) });
    }
    const body = {
      game: game().value,
      players: Number(players.value),
      deck_size: Number(deck.value),
      format: format.value,
      move_time_limit: Number(form.move_time_limit.value),
      seats: seatSpecs,
    };
    const result = await A.api(config.create_url, { method: "POST", body });
    if (!result.ok) {
      error.textContent = A.errorMessage(result);
      button.disabled = false;
      return;
    }
    window.location.href = config.play_url.replace("/0/", "/" + result.data.id + "/");
  });

  for (const button of document.querySelectorAll("button.join")) {
    button.addEventListener("click", async () => {
      button.disabled = true;
      const result = await A.api(button.dataset.join, { method: "POST", body: {} });
      if (!result.ok) {
        button.disabled = false;
        button.after(A.el("span", { className: "errorlist", text: " " + A.errorMessage(result) }));
        return;
      }
      window.location.href = button.dataset.play;
    });
  }

  refreshGame();
})();
