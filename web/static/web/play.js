/* Playing a match in the browser, through the same JSON API every bot uses:
 *   GET  /api/v1/matches/<id>/me/     your view: your hand, and your legal moves on your turn
 *   GET  /api/v1/matches/<id>/stream/ your view again after every change (EventSource)
 *   POST /api/v1/matches/<id>/moves/  {"ply": ..., "move": ...}, one of the legal moves
 * The cards you can play are buttons; the moves offered are exactly the legal moves the
 * server sent, so the page never has to know the rules.
 */
(function () {
  "use strict";
  const A = window.Arena;
  const config = A.readConfig("play-config");
  const $ = (id) => document.getElementById(id);

  let view = null; // the newest answer of /me/ or state event of the stream
  let selected = []; // Durak attack: the cards chosen so far
  let covers = []; // Durak defence: the [attack, cover] pairs chosen so far
  let target = null; // Durak defence: the attack card to cover next
  let busy = false;
  let source = null; // the match's stream (EventSource), while the match goes on
  let notice = null; // {text, error}

  const sameSet = (a, b) => a.length === b.length && a.every((x) => b.includes(x));
  const legal = (type) => (view && view.legal_moves ? view.legal_moves.filter((m) => m.type === type) : []);
  const name = (seat) => A.seatName(config.seats, seat);

  // --- Loading and waiting ---------------------------------------------------------------

  async function start() {
    const answer = await A.api(config.me_url);
    if (answer.status === 403 || answer.status === 401) return offerSeat();
    if (!answer.ok) return say(A.errorMessage(answer), true);
    apply(answer.data);
    follow();
  }

  function apply(data) {
    if (!view || data.ply !== view.ply || data.status !== view.status || data.your_turn !== view.your_turn) {
      selected = [];
      covers = [];
      target = null;
    }
    view = data;
    render();
  }

  function follow() {
    // The match's stream sends our view after every change (the others' moves, the start,
    // the end); the browser reconnects by itself, resuming from the last event's ply.
    if (source || !view || (view.status !== "waiting" && view.status !== "active")) return;
    source = new EventSource(config.stream_url);
    source.addEventListener("state", (event) => {
      const data = JSON.parse(event.data);
      if (!busy && (!view || data.ply >= view.ply)) apply(data);
    });
    source.addEventListener("end", () => { source.close(); source = null; });
    source.addEventListener("reconnect", () => {
      source.close();
      source = null;
      setTimeout(follow, 1000);
    });
  }

  async function refresh() {
    const answer = await A.api(config.me_url);
    if (answer.ok) apply(answer.data);
    follow();
  }

  function offerSeat() {
    $("last-move").textContent = "You do not play in this match yet.";
    $("table").replaceChildren(A.el("p", { text: "An open seat is waiting for you." }));
    setPrompt("Take the open seat to play.");
    $("buttons").replaceChildren(button("Take a seat", "btn-gold", async () => {
      const answer = await A.api(config.join_url, { method: "POST", body: {} });
      if (!answer.ok) return say(A.errorMessage(answer), true);
      start();
    }));
  }

  // --- Moves -------------------------------------------------------------------------------

  function idempotencyKey() {
    return "web-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 12);
  }

  async function submit(move) {
    if (busy) return;
    busy = true;
    notice = null;
    render();
    const answer = await A.api(config.moves_url, {
      method: "POST",
      body: { ply: view.ply, move },
      headers: { "Idempotency-Key": idempotencyKey() },
    });
    busy = false;
    if (!answer.ok) notice = { text: A.errorMessage(answer), error: true };
    await refresh();
  }

  function clickCard(code) {
    if (busy || !view.your_turn) return;
    notice = null;
    if (view.view.game === "durak") {
      if (legal("attack").length) {
        selected = selected.includes(code) ? selected.filter((c) => c !== code) : selected.concat([code]);
      } else {
        const used = covers.find((pair) => pair[1] === code);
        if (used) {
          covers = covers.filter((pair) => pair !== used);
          target = used[0];
        } else if (coverCandidates().has(code)) {
          covers = covers.concat([[currentTarget(), code]]);
          target = null;
        }
      }
      render();
      return;
    }
    const move = view.legal_moves.find((m) => (m.type === "lead" || m.type === "cover") && m.card === code);
    if (move) submit(move);
  }

  // Durak defence: which attack card is being covered, and which cards may cover it.
  function uncovered() {
    return (view.view.table || []).filter((card) => !covers.some((pair) => pair[0] === card));
  }

  function currentTarget() {
    const open = uncovered();
    return open.includes(target) ? target : open[0] || null;
  }

  function beatsWithChosen() {
    return legal("beat").filter((m) => covers.every(([a, c]) => m.covers.some(([x, y]) => x === a && y === c)));
  }

  function coverCandidates() {
    const aim = currentTarget();
    const cards = new Set();
    if (!aim) return cards;
    for (const m of beatsWithChosen()) for (const [a, c] of m.covers) if (a === aim) cards.add(c);
    return cards;
  }

  function playableCards() {
    const cards = new Set();
    if (!view || !view.your_turn || busy) return cards;
    if (view.view.game === "durak") {
      const attacks = legal("attack");
      if (attacks.length) {
        for (const m of attacks) {
          if (selected.every((c) => m.cards.includes(c))) for (const c of m.cards) cards.add(c);
        }
        return cards;
      }
      return coverCandidates();
    }
    for (const m of view.legal_moves) if (m.card) cards.add(m.card);
    return cards;
  }

  // --- Drawing -------------------------------------------------------------------------------

  function button(text, style, onclick, disabled) {
    return A.el("button", { type: "button", className: "btn " + (style || ""), onclick, disabled: !!disabled || busy }, text);
  }

  function setPrompt(parts, error) {
    const prompt = $("prompt");
    prompt.replaceChildren(...[].concat(parts));
    prompt.classList.toggle("error", !!error);
  }

  function say(text, error) {
    notice = { text, error };
    setPrompt(text, error);
  }

  function handRenderer(seat, cards) {
    const playable = playableCards();
    // A long hand (a Durak hand after taking) is a fan, wrapping to the table's width.
    const fan = cards.length > 8 ? " fan" : "";
    const row = A.el("div", { className: "cards" + fan + (view.your_turn ? " my-turn" : ""), id: "my-hand", "aria-label": "Your hand" });
    for (const code of cards) {
      const chosen = selected.includes(code) || covers.some((pair) => pair[1] === code);
      const classes = [playable.has(code) ? "playable" : "", chosen ? "selected" : ""].join(" ");
      row.append(A.cardFace(code, { button: true, className: classes, disabled: !playable.has(code) && !chosen, onclick: () => clickCard(code) }));
    }
    if (!cards.length) row.append(A.el("span", { className: "empty-zone", text: "no cards in hand" }));
    return row;
  }

  function decorateDefence() {
    // Show the chosen covers on the table and which attack card is covered next.
    const aim = currentTarget();
    for (const pair of $("table").querySelectorAll(".pair[data-attack]")) {
      const attack = pair.dataset.attack;
      const chosen = covers.find((p) => p[0] === attack);
      if (chosen) pair.append(A.cardFace(chosen[1]));
      const face = pair.querySelector(".card");
      if (attack === aim) face.classList.add("target");
      if (!chosen) {
        face.style.cursor = "pointer";
        face.addEventListener("click", () => { target = attack; render(); });
      }
    }
  }

  function lastMoveWords(state) {
    const history = state.history || [];
    if (!history.length) {
      if (state.game === "durak") return ["The cards are dealt; trump is ", A.cardText(state.trump_card), "."];
      return ["The cards are dealt."];
    }
    return describe(history, history.length - 1, state);
  }

  function describe(history, index, state) {
    const entry = history[index];
    let before = null;
    if (state.game === "durak" && entry.move.type === "take") {
      for (let i = index - 1; i >= 0; i--) {
        if (history[i].move.type === "attack") { before = { table: history[i].move.cards }; break; }
      }
    }
    if (state.game === "volynshchik" && index === history.length - 1 && entry.move.type === "cover") {
      const pile = state.pile || [];
      if (pile[pile.length - 1] === entry.move.card) before = { pile: pile.slice(0, -1) };
    }
    return A.describeMove(state.game, entry.seat, entry.move, before, state, config.seats, (view.your_seats || [])[0]);
  }

  function renderHistory(state) {
    const history = state.history || [];
    const items = history.map((entry, i) => A.el("li", {}, [A.el("span", { className: "ply-no", text: String(i + 1) }), ...describe(history, i, state)]));
    if (!items.length) items.push(A.el("li", { className: "empty", text: "No moves yet in this deal." }));
    const list = $("history");
    list.replaceChildren(...items);
    list.scrollTop = list.scrollHeight;
  }

  // A match that did not end by the rules, told as a person would say it.
  function yourForfeit(reason) {
    if (reason === "resign") return "You resigned: the match is lost.";
    if (reason === "timeout") return "You ran out of time: the match is lost.";
    return "You lost the match: " + A.endReasonWords(reason) + ".";
  }

  function theirForfeit(who, reason) {
    if (reason === "resign") return who + " resigned.";
    if (reason === "timeout") return who + " ran out of time.";
    return who + " forfeited: " + A.endReasonWords(reason) + ".";
  }

  function renderResult() {
    const banner = $("result");
    if (view.status !== "finished" && view.status !== "aborted") { banner.hidden = true; return; }
    banner.hidden = false;
    const result = view.result || {};
    const game = view.view ? view.view.game : config.game;
    const byRules = A.endedByRules(view.end_reason);
    let text;
    let tone = "";
    if (view.status === "aborted") text = "The match was aborted.";
    else if (result.loser === null || result.loser === undefined) text = "Drawn: nobody lost.";
    else if (view.your_seats.includes(result.loser)) {
      tone = "lose";
      if (!byRules) text = yourForfeit(view.end_reason);
      else text = game === "durak" ? "You lost: you are the fool." : "You lost: you were the last one holding cards.";
    } else {
      tone = "win";
      const headline = config.players === 2 ? "You won! " : "You did not lose! ";
      text = headline + (byRules ? A.resultText(game, result, config.seats, { endReason: view.end_reason }) : theirForfeit(name(result.loser), view.end_reason));
    }
    banner.className = "result-banner " + tone;
    banner.dataset.loser = result.loser === null || result.loser === undefined ? "" : String(result.loser);
    banner.replaceChildren(text + " ", A.el("a", { href: config.replay_page + "?ply=" + 0, style: "color:#fff;text-decoration:underline", text: "Watch the replay" }), " · ",
      A.el("a", { href: config.lobby, style: "color:#fff;text-decoration:underline", text: "Play again" }));
  }

  function render() {
    if (!view) return;
    const buttons = [];
    // For tests and scripts: the ply shown and whether the page waits for the person.
    const tableEl = $("table");
    tableEl.dataset.ply = String(view.ply);
    tableEl.dataset.state = busy ? "busy" : view.status === "active" ? (view.your_turn ? "your-turn" : "waiting") : view.status;
    $("resign").hidden = view.status !== "active";
    if (view.status === "waiting" || !view.view) {
      $("ply-label").textContent = "";
      $("last-move").textContent = view.status === "waiting" ? "Waiting for players to take the open seats. Share this page's address." : "";
      $("table").replaceChildren(A.el("p", {}, [A.el("span", { className: "spinner" }), " The match starts as soon as every seat is held."]));
      setPrompt("Waiting for players…");
      $("buttons").replaceChildren();
      renderResult();
      return;
    }
    const state = view.view;
    const history = state.history || [];
    const loser = view.status === "finished" && view.result ? view.result.loser : null;
    A.renderTable($("table"), state, {
      seats: config.seats, me: view.seat, lastMove: history[history.length - 1] || null, loser, handRenderer,
    });
    $("ply-label").textContent = "Move " + view.ply;
    $("last-move").replaceChildren(...lastMoveWords(state));
    renderHistory(state);
    renderResult();

    let prompt = "";
    if (view.status === "finished") prompt = "The match is over.";
    else if (view.status === "aborted") prompt = "The match was aborted.";
    else if (!view.your_turn) prompt = [A.el("span", { className: "spinner" }), " Waiting for " + name(view.to_move) + "…"];
    else if (state.game === "durak") {
      if (legal("attack").length) {
        const ok = legal("attack").some((m) => sameSet(m.cards, selected));
        prompt = selected.length ? (ok ? "Attack with these cards, or add more of the same rank." : "Add or remove cards of one rank.") : "Your attack: pick a card, or several of one rank, then press Attack.";
        buttons.push(button(selected.length ? ["Attack with ", ...A.cardsText(selected)] : "Attack", "btn-primary", () => {
          const move = legal("attack").find((m) => sameSet(m.cards, selected));
          if (move) submit(move);
        }, !ok));
        if (selected.length) buttons.push(button("Clear", "", () => { selected = []; render(); }));
      } else {
        const aim = currentTarget();
        const full = legal("beat").find((m) => m.covers.length === covers.length && covers.every(([a, c]) => m.covers.some(([x, y]) => x === a && y === c)));
        if (!legal("beat").length) prompt = "You cannot beat this attack: take the cards.";
        else if (full) prompt = "Every card is covered: press Beat.";
        else if (aim && !coverCandidates().size) prompt = ["No card of yours covers ", A.cardText(aim), " with these choices: change them or take."];
        else prompt = ["Cover ", A.cardText(aim), ": click a higher card of its suit or a trump. Or take the cards."];
        buttons.push(button("Beat", "btn-primary", () => submit(full), !full));
        if (covers.length) buttons.push(button("Reset", "", () => { covers = []; target = null; render(); }));
        if (legal("take").length) buttons.push(button("Take", "btn-danger", () => submit(legal("take")[0])));
      }
    } else {
      const pile = state.pile || [];
      const top = pile[pile.length - 1];
      if (state.phase === "lead") prompt = pile.length ? "Your own move: play one more card onto the pile." : "Your lead: click any card.";
      else if (legal("cover").length) prompt = ["Cover ", A.cardText(top), ": click a card that beats it."];
      else prompt = ["You cannot cover ", A.cardText(top), ": take it", legal("declare").length ? ", or declare your trump." : "."];
      if (legal("take").length) buttons.push(button(["Take ", top ? A.cardText(top) : "the top card"], "btn-danger", () => submit(legal("take")[0])));
      if (legal("declare").length) buttons.push(button(["Declare trump (turn up ", state.reserve ? A.cardText(state.reserve) : "your reserve", ")"], "btn-gold", () => submit(legal("declare")[0])));
    }
    if (notice) setPrompt(notice.text, notice.error);
    else setPrompt(prompt);
    $("buttons").replaceChildren(...buttons);
    if (state.game === "durak" && view.your_turn && !legal("attack").length) decorateDefence();
    tick();
  }

  function tick() {
    const clock = $("clock");
    if (!view || view.status !== "active" || !view.deadline_at) { clock.textContent = ""; return; }
    const left = Math.max(0, Math.round((Date.parse(view.deadline_at) - Date.now()) / 1000));
    clock.textContent = (view.your_turn ? "Your time: " : name(view.to_move) + ": ") + (left >= 120 ? Math.round(left / 60) + " min" : left + " s");
  }
  window.setInterval(tick, 1000);

  $("resign").addEventListener("click", async () => {
    if (!window.confirm("Resign this match? Your seat loses it.")) return;
    const answer = await A.api(config.resign_url, { method: "POST", body: {} });
    if (!answer.ok) say(A.errorMessage(answer), true);
    refresh();
  });

  start();
})();
