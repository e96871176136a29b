/* The replay viewer: steps through GET /api/v1/matches/<id>/replay/ one ply at a time.
 *
 * Buttons, the slider and the keyboard (arrows, Home, End, space) move through the
 * steps; the address keeps ?ply=N so a link points at a given move. A match still in
 * play is followed live through its stream, GET /api/v1/matches/<id>/stream/ (EventSource).
 *
 * A move's comment (the bot's word on why it chose it, in the API's steps once the match is
 * over) is shown under the move in the list and in the caption.
 *
 * Without a replay_url in its config the viewer waits for a document handed to
 * window.ArenaReplay.open(data): a replay file opened in the browser (/replays/open/), or
 * the document a standalone replay embeds (cardkit replay FILE --out FILE.html).
 */
(function () {
  "use strict";
  const A = window.Arena;
  const config = A.readConfig("match-config");
  const $ = (id) => document.getElementById(id);
  const table = $("table");
  const slider = $("slider");
  const playButton = $("play");
  const moveList = $("move-list");
  let replay = null;
  let steps = [];
  let current = 0;
  let timer = null;
  let following = false;
  let deadline = config.deadline_at ? Date.parse(config.deadline_at) : null; // the seat to move's
  let dealStarts = [0]; // a series: the step where each deal starts

  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  function words(index) {
    const step = steps[index];
    const state = step.state;
    if (index === 0) {
      if (config.game === "durak") {
        return ["The cards are dealt; the trump card is ", A.cardText(state.trump_card), ". ", capital(A.seatName(config.seats, state.to_move)) + " attacks first."];
      }
      return ["The whole deck is dealt; each player's last card is a face-down reserve. ", capital(A.seatName(config.seats, state.to_move)) + " leads."];
    }
    const before = steps[index - 1].state;
    const parts = A.describeMove(config.game, step.seat, step.move, before, state, config.seats);
    const series = state.series;
    if (series && before.series && series.deals.length > before.series.deals.length) {
      const deal = series.deals[series.deals.length - 1];
      parts.push(". Deal " + series.deals.length + " is over: ");
      if (deal.loser === null || deal.loser === undefined) parts.push("drawn, its letter carries over");
      else parts.push(capital(A.seatName(config.seats, deal.loser)) + " is the fool of the deal and now holds " + (series.letters_word[deal.loser] || "no letters"));
    } else if (state.is_over && !series) {
      parts.push(". The deal is over.");
    }
    // An HTTP bot's own time, from the arena's request sent to its answer.
    if (step.think_time !== null && step.think_time !== undefined) {
      parts.push(" (thought " + step.think_time.toFixed(2) + " s)");
    }
    const said = commentNode(step);
    if (said) parts.push(said);
    return parts;
  }

  // The bot's own word on its move: the API gives it once the match is over (null before).
  function commentNode(step) {
    if (typeof step.comment !== "string" || step.comment === "") return null;
    return A.el("q", { className: "move-comment", title: "The bot's comment on this move" }, step.comment);
  }

  function finalResult() {
    if (!replay || !replay.complete) return null;
    return A.resultText(config.game, replay.result, config.seats, {
      forfeitSeat: config.forfeit_seat,
      forfeitReason: config.forfeit_reason,
      endReason: replay.end_reason,
    });
  }

  function show(index) {
    if (!steps.length) return;
    current = Math.max(0, Math.min(index, steps.length - 1));
    const step = steps[current];
    const last = current === steps.length - 1;
    const loser = last && replay.complete && replay.result ? replay.result.loser : null;
    A.renderTable(table, step.state, { seats: config.seats, me: null, lastMove: step, loser });

    const deal = step.state.series ? "Deal " + (step.state.series.deal_number + 1) + " · " : "";
    const live = replay.status === "active" ? "Live · " : "";
    $("ply-label").textContent = live + deal + (current === 0 ? "Start" : "Move " + current + " of " + (steps.length - 1));
    for (const button of $("deals").querySelectorAll("button")) {
      const number = Number(button.dataset.deal);
      const inDeal = current >= dealStarts[number] && (number + 1 >= dealStarts.length || current < dealStarts[number + 1]);
      if (inDeal) button.setAttribute("aria-current", "step");
      else button.removeAttribute("aria-current");
    }
    $("move-words").replaceChildren(...words(current));
    const banner = $("result");
    const text = last ? finalResult() : null;
    banner.hidden = !text;
    if (text) {
      banner.textContent = text;
      banner.dataset.loser = loser === null || loser === undefined ? "" : String(loser);
    }
    slider.value = String(current);
    $("first").disabled = $("prev").disabled = current === 0;
    $("next").disabled = $("last").disabled = last;
    for (const item of moveList.querySelectorAll("li[aria-current]")) item.removeAttribute("aria-current");
    const item = moveList.querySelector('li[data-ply="' + current + '"]');
    if (item) {
      item.setAttribute("aria-current", "step");
      const box = moveList.getBoundingClientRect();
      const at = item.getBoundingClientRect();
      if (at.top < box.top || at.bottom > box.bottom) moveList.scrollTop += at.top - box.top - box.height / 2;
    }
    // A standalone replay (a file://, an iframe's about:srcdoc) has no address to keep.
    if (/^https?:$/.test(window.location.protocol)) {
      const url = new URL(window.location.href);
      url.searchParams.set("ply", String(current));
      window.history.replaceState(null, "", url);
      $("permalink").href = url.pathname + url.search;
    } else {
      $("permalink").parentElement.hidden = true;
    }
    if (last) stop();
  }

  // A series of deals: where each deal starts, as marks on the slider, buttons that jump
  // to them and a heading in the move list.
  function findDeals() {
    dealStarts = [0];
    steps.forEach((step, i) => {
      const series = step.state.series;
      if (series && series.deal_number >= dealStarts.length) dealStarts[series.deal_number] = i;
    });
    const last = Math.max(1, steps.length - 1);
    const series = steps.length && steps[0].state.series;
    $("deal-marks").replaceChildren(...(series ? dealStarts.slice(1).map((at) =>
      A.el("span", { className: "deal-mark", style: "--at:" + at / last, title: "Deal " + (dealStarts.indexOf(at) + 1) })) : []));
    const deals = $("deals");
    deals.hidden = !series;
    deals.replaceChildren(...(series ? [A.el("span", { className: "muted small", text: "Deals:" })].concat(dealStarts.map((at, number) =>
      A.el("button", { type: "button", className: "btn btn-small", "data-deal": number, onclick: () => { stop(); show(at); } }, "Deal " + (number + 1)))) : []));
  }

  function buildMoveList() {
    const items = [];
    for (let i = 1; i < steps.length; i++) {
      const number = dealStarts.indexOf(i - 1);
      if (number > 0 || (number === 0 && dealStarts.length > 1)) {
        const head = A.el("li", { className: "deal-start", "data-deal": number, tabindex: "0" }, "Deal " + (number + 1));
        head.addEventListener("click", () => { stop(); show(i - 1); });
        head.addEventListener("keydown", (event) => { if (event.key === "Enter") { stop(); show(i - 1); } });
        items.push(head);
      }
      const li = A.el("li", { "data-ply": i, tabindex: "0" }, [A.el("span", { className: "ply-no", text: String(i) }), ...A.describeMove(config.game, steps[i].seat, steps[i].move, steps[i - 1].state, steps[i].state, config.seats), commentNode(steps[i])]);
      li.addEventListener("click", () => { stop(); show(i); });
      li.addEventListener("keydown", (event) => { if (event.key === "Enter") { stop(); show(i); } });
      items.push(li);
    }
    if (!items.length) items.push(A.el("li", { className: "empty", text: "No moves yet." }));
    moveList.replaceChildren(...items);
  }

  function play() {
    if (current >= steps.length - 1) show(0);
    setPlayButton(true);
    timer = window.setInterval(() => {
      if (current >= steps.length - 1) stop();
      else show(current + 1);
    }, Number($("speed").value));
  }

  function stop() {
    if (timer) window.clearInterval(timer);
    timer = null;
    setPlayButton(false);
  }

  const PLAY_ICON = "M7 5v14l11-7z";
  const PAUSE_ICON = "M6 5h4v14H6zM14 5h4v14h-4z";
  function setPlayButton(playing) {
    playButton.querySelector("path").setAttribute("d", playing ? PAUSE_ICON : PLAY_ICON);
    playButton.querySelector("span").textContent = playing ? "Pause" : "Play";
    playButton.setAttribute("aria-label", playing ? "Pause" : "Autoplay");
  }

  function toggle() { if (timer) stop(); else play(); }

  $("first").addEventListener("click", () => { stop(); show(0); });
  $("prev").addEventListener("click", () => { stop(); show(current - 1); });
  $("next").addEventListener("click", () => { stop(); show(current + 1); });
  $("last").addEventListener("click", () => { stop(); show(steps.length - 1); });
  playButton.addEventListener("click", toggle);
  slider.addEventListener("input", () => { stop(); show(Number(slider.value)); });
  $("speed").addEventListener("change", () => { if (timer) { stop(); play(); } });
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = {
      ArrowLeft: () => show(current - 1),
      ArrowRight: () => show(current + 1),
      Home: () => show(0),
      End: () => show(steps.length - 1),
    };
    if (keys[event.key]) { event.preventDefault(); stop(); keys[event.key](); }
    else if (event.key === " " && target.tagName !== "BUTTON") { event.preventDefault(); toggle(); }
  });

  function accept(data) {
    const atEnd = steps.length === 0 || current === steps.length - 1;
    replay = data;
    steps = replay.steps;
    slider.max = String(steps.length - 1);
    findDeals();
    buildMoveList();
    tick();
    if (replay.seed && $("seed")) $("seed").textContent = replay.seed;
    return atEnd;
  }

  async function load() {
    const result = await A.api(config.replay_url);
    if (!result.ok) {
      table.replaceChildren(A.el("p", { text: "The replay could not be loaded: " + A.errorMessage(result) }));
      return false;
    }
    return accept(result.data);
  }

  // A match in play: the clock of the seat to move, and the page's head told the moves
  // played, as the viewer counts them.
  function tick() {
    const clock = $("clock");
    const live = replay && replay.status === "active" && deadline !== null && steps.length;
    clock.hidden = !live;
    if (!live) return;
    const seat = steps[steps.length - 1].state.to_move;
    const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
    clock.textContent = capital(A.seatName(config.seats, seat)) + " to move: " + (left >= 120 ? Math.round(left / 60) + " min" : left + " s") + " left";
    const head = $("match-outcome");
    if (head) head.textContent = "In play, " + playedWords(steps.length - 1);
  }
  window.setInterval(tick, 1000);

  function playedWords(moves) {
    return moves === 0 ? "no move yet" : moves + " move" + (moves === 1 ? "" : "s") + " played";
  }

  function follow() {
    // A match in play: its stream sends a state event after every change; the new steps
    // are then loaded (one load at a time; a change meanwhile loads once more).
    following = true;
    const source = new EventSource(config.stream_url + "?after_ply=" + replay.ply);
    let loading = false;
    let again = false;
    async function update() {
      if (loading) { again = true; return; }
      loading = true;
      do {
        again = false;
        const atEnd = await load();
        if (atEnd) show(steps.length - 1);
      } while (again);
      loading = false;
      if (replay.status !== "active") { source.close(); window.location.reload(); }
    }
    source.addEventListener("state", (event) => {
      const data = JSON.parse(event.data);
      deadline = data.deadline_at ? Date.parse(data.deadline_at) : null;
      if (data.ply !== replay.ply || data.status !== replay.status) update();
    });
    source.addEventListener("end", () => { source.close(); update(); });
  }

  // A replay document from a file: the game and the seats come from the document itself
  // (a local arena's file names its seats); an end reason that is not the engine's is
  // the fault of the seat that lost, as on a match page.
  function open(data) {
    if (!data || !Array.isArray(data.steps) || !data.steps.length || !data.steps[0].state) {
      throw new Error("this is not a replay: it has no steps");
    }
    stop();
    const first = data.steps[0].state;
    config.game = first.game;
    config.players = first.players;
    config.seats = Array.from({ length: first.players }, (_, index) => ({
      index, name: Array.isArray(data.seats) ? String(data.seats[index] || "") : "",
    }));
    const reason = data.end_reason || "";
    const forfeit = reason !== "" && !A.endedByRules(reason) && data.result;
    config.forfeit_seat = forfeit ? data.result.loser : null;
    config.forfeit_reason = forfeit ? reason : "";
    steps = [];
    accept(data);
    show(0);
  }

  if (!config.replay_url) {
    window.ArenaReplay = { open };
    return;
  }

  load().then(() => {
    if (!steps.length) return;
    const start = config.start_ply;
    if (start !== null && start !== undefined) show(start);
    else show(replay.complete ? 0 : steps.length - 1);
    if (!replay.complete) follow();
  });
})();
