/* Card faces, the table and moves in words, shared by the replay and play pages.
 *
 * A card is the API's two-character string ("TH" is the ten of hearts). cardFace draws
 * the same markup as web/cards.py on the server. renderTable draws one engine state (a
 * `view(seat)` or a `reveal()`, as the JSON API gives them) into a container.
 */
(function () {
  "use strict";

  const RANKS = "6789TJQKA";
  const SUITS = "SHDC";
  const RANK_LABEL = { T: "10" };
  const RANK_NAME = { 6: "six", 7: "seven", 8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king", A: "ace" };
  const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
  const LETTERS = ["Д", "У", "Р", "А", "К"];

  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of [].concat(children || [])) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function suitIcon(suit, className) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", className);
    const use = document.createElementNS(SVG, "use");
    use.setAttribute("href", "#suit-" + suit);
    svg.append(use);
    return svg;
  }

  const isRed = (code) => code[1] === "H" || code[1] === "D";
  const label = (code) => (RANK_LABEL[code[0]] || code[0]) + SUIT_SYMBOL[code[1]];
  const cardName = (code) => RANK_NAME[code[0]] + " of " + SUIT_NAME[code[1]];

  /* One card face; with opts.button a <button> that can be clicked. */
  function cardFace(code, opts) {
    opts = opts || {};
    const rank = RANK_LABEL[code[0]] || code[0];
    const corner = (where) =>
      el("span", { className: "corner " + where }, [el("span", { className: "rank", text: rank }), suitIcon(code[1], "suit")]);
    const classes = ["card", isRed(code) ? "red" : "black"];
    if (opts.size) classes.push("card-" + opts.size);
    if (opts.className) classes.push(opts.className);
    const attrs = { className: classes.join(" "), "data-card": code, "aria-label": cardName(code), title: cardName(code) };
    if (opts.button) {
      attrs.type = "button";
      if (opts.disabled) attrs.disabled = true;
      if (opts.onclick) attrs.onclick = opts.onclick;
    } else {
      attrs.role = "img";
    }
    return el(opts.button ? "button" : "span", attrs, [corner("tl"), suitIcon(code[1], "pip"), corner("br")]);
  }

  function cardBack(size) {
    return el("span", { className: "card back" + (size ? " card-" + size : ""), role: "img", "aria-label": "face-down card" });
  }

  /* A card as coloured text, for sentences: 10♥ */
  function cardText(code) {
    return el("span", { className: "card-text" + (isRed(code) ? " red" : ""), "data-card": code, text: label(code) });
  }

  function cardsText(codes) {
    const out = [];
    codes.forEach((code, i) => {
      if (i) out.push(" ");
      out.push(cardText(code));
    });
    return out;
  }

  /* Hands sorted for reading: by suit, trumps last, low to high. */
  function sortHand(cards, trump) {
    const suitOrder = (s) => (s === trump ? 9 : SUITS.indexOf(s));
    return cards.slice().sort((a, b) => suitOrder(a[1]) - suitOrder(b[1]) || RANKS.indexOf(a[0]) - RANKS.indexOf(b[0]));
  }

  function seatName(seats, index) {
    const seat = seats && seats[index];
    return "seat " + index + (seat && seat.name ? " (" + seat.name + ")" : "");
  }

  function ordinal(n) {
    return n + (n % 10 === 1 && n % 100 !== 11 ? "st" : n % 10 === 2 && n % 100 !== 12 ? "nd" : n % 10 === 3 && n % 100 !== 13 ? "rd" : "th");
  }

  /* The move `move` by `seat`, made in state `before` and giving `after`, in words. */
  // ``me``: the reader's own seat, told as "you" ("you take 8♥"); others by name.
  function describeMove(game, seat, move, before, after, seats, me) {
    const you = me !== null && me !== undefined && seat === me;
    const verb = (third) => (you ? third.replace(/s$/, "") : third);
    const their = you ? "your" : "their";
    const parts = [(you ? "you" : seatName(seats, seat)) + " "];
    if (!move) return [];
    if (game === "durak") {
      if (move.type === "attack") parts.push(verb("attacks") + " with ", ...cardsText(move.cards));
      else if (move.type === "beat") {
        parts.push(verb("covers") + " ");
        move.covers.forEach(([attack, cover], i) => {
          if (i) parts.push(i === move.covers.length - 1 ? " and " : ", ");
          parts.push(cardText(attack), " with ", cardText(cover));
        });
      } else if (move.type === "take") {
        const taken = (before && before.table) || [];
        parts.push(verb("takes") + " ", ...(taken.length ? cardsText(taken) : ["the cards"]));
      } else parts.push(move.type);
    } else {
      const pile = (before && before.pile) || [];
      const top = pile[pile.length - 1];
      if (move.type === "lead") {
        const own = before && before.phase === "lead" && pile.length > 0;
        parts.push(own ? verb("plays") + " " : verb("leads") + " ", cardText(move.card), own ? " as " + their + " own move" : "");
      } else if (move.type === "cover") parts.push(verb("covers") + " ", top ? cardText(top) : "the top card", " with ", cardText(move.card));
      else if (move.type === "take") {
        parts.push(verb("takes") + " ", top ? cardText(top) : "the top card");
        if (pile.length === 1) parts.push(", the whole pile");
      } else if (move.type === "declare") {
        const reserve = after && after.revealed_reserves && after.revealed_reserves[seat];
        parts.push(verb("declares") + ": " + (you ? "turn" : "turns") + " up the reserve ", reserve ? cardText(reserve) : "card");
        if (reserve) parts.push(", " + SUIT_NAME[reserve[1]] + " are " + their + " trump");
      } else parts.push(move.type);
    }
    return parts;
  }

  /* What the game's final state, or the match's stored result, says in words. */
  function resultText(game, result, seats, extra) {
    const text = resultWords(game, result, seats, extra);
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  function resultWords(game, result, seats, extra) {
    extra = extra || {};
    if (extra.forfeitSeat !== null && extra.forfeitSeat !== undefined) {
      return seatName(seats, extra.forfeitSeat) + " forfeited" + (extra.forfeitReason ? ": " + extra.forfeitReason : "") + " and lost the match.";
    }
    if (!result) return "";
    if (result.loser === null || result.loser === undefined) {
      const why = extra.endReason ? endReasonWords(extra.endReason) : "";
      return "Drawn: nobody lost" + (why ? " (" + why + ")" : "") + ".";
    }
    if (game === "durak") {
      if (result.letters) return seatName(seats, result.loser) + " collected ДУРАК and is the fool.";
      return seatName(seats, result.loser) + " is the fool.";
    }
    return seatName(seats, result.loser) + " lost: the last one holding cards.";
  }

  function lettersOf(count) {
    return el("span", { className: "letters", title: count + " of 5 letters" },
      LETTERS.map((letter, i) => el("span", { className: i < count ? "got" : "not", text: letter })));
  }

  function trumpBadge(suit, text) {
    return el("span", { className: "trump-suit" + (suit === "H" || suit === "D" ? " red" : "") }, [suitIcon(suit, "s"), text || "trump"]);
  }

  /* Draw a state into `root`.
   * opts: seats (names), me (the viewer's seat or null), reveal (all hands known),
   *       lastMove {seat, move}, loser (seat that lost, for the final step),
   *       handRenderer(seat, cards) to draw the viewer's own hand (play page). */
  function renderTable(root, state, opts) {
    opts = opts || {};
    const game = state.game;
    const seats = opts.seats || [];
    const players = state.players;
    const hands = state.hands || null;
    const series = state.series || null;
    const trump = state.trump_suit || null;
    const outOrder = state.out_order || [];
    const seatEls = [];
    const order = [];
    // The viewer's own seat comes last, next to the action bar.
    for (let i = 1; i <= players; i++) order.push(((opts.me ?? -1) + i + players) % players);
    if (opts.me === null || opts.me === undefined) { order.length = 0; for (let i = 0; i < players; i++) order.push(i); }

    for (const index of order) {
      const isMe = opts.me === index;
      const toMove = !state.is_over && state.to_move === index;
      const out = outOrder.includes(index);
      const lost = opts.loser === index;
      const classes = ["seat"];
      if (toMove) classes.push("to-move");
      if (out) classes.push("out");
      if (lost) classes.push("loser");
      if (isMe) classes.push("me");
      const name = seats[index] && seats[index].name;
      const head = el("div", { className: "seat-head" }, [
        el("span", { className: "who" }, [
          "Seat " + index + " · ",
          seats[index] && seats[index].url ? el("a", { href: seats[index].url, text: name }) : name || "open",
          isMe ? " (you)" : "",
        ]),
      ]);
      if (game === "durak" && !state.is_over) {
        if (state.attacker === index) head.append(el("span", { className: "role", text: "attacker" }));
        if (state.defender === index) head.append(el("span", { className: "role", text: "defender" }));
      }
      if (toMove) head.append(el("span", { className: "role turn", text: "to move" }));
      if (out) head.append(el("span", { className: "role outrole", text: "out " + ordinal(outOrder.indexOf(index) + 1) }));
      if (lost) head.append(el("span", { className: "role lost", text: game === "durak" ? "fool" : "lost" }));
      if (series) head.append(lettersOf(series.letters[index]));
      if (game === "volynshchik" && state.declared && state.declared[index]) head.append(trumpBadge(state.declared[index], "trump"));
      head.append(el("span", { className: "count", text: state.hand_sizes[index] + " card" + (state.hand_sizes[index] === 1 ? "" : "s") }));

      const body = el("div", { className: "hand-row" });
      let handCards = null;
      if (hands) handCards = hands[index];
      else if (isMe && state.hand) handCards = state.hand;
      if (isMe && opts.handRenderer) {
        body.append(opts.handRenderer(index, sortHand(state.hand || [], trump)));
      } else if (handCards) {
        // Every hand shown face up is a fan: a long one wraps to the width of its seat.
        const row = el("div", { className: "cards fan" });
        for (const code of sortHand(handCards, trump)) row.append(cardFace(code));
        if (!handCards.length) row.append(el("span", { className: "empty-zone", text: out ? "out of the deal" : "no cards" }));
        body.append(row);
      } else {
        const row = el("div", { className: "cards fan fan-sm" });
        const known = (state.known_cards && state.known_cards[index]) || [];
        const hidden = state.hand_sizes[index] - known.length;
        for (const code of sortHand(known, trump)) row.append(cardFace(code, { size: "sm" }));
        for (let i = 0; i < hidden; i++) row.append(cardBack("sm"));
        if (!state.hand_sizes[index]) row.append(el("span", { className: "empty-zone", text: out ? "out of the deal" : "no cards" }));
        body.append(row);
        if (known.length) body.append(el("div", { className: "muted small hand-note", text: "Face up: cards everyone saw go into this hand." }));
      }
      if (game === "volynshchik") {
        const revealed = state.revealed_reserves && state.revealed_reserves[index];
        const reserve = revealed || (state.reserves && state.reserves[index]) || (isMe && state.reserve) || null;
        const info = el("div", { className: "reserve" }, ["Reserve: "]);
        if (reserve) {
          const face = cardFace(reserve, { size: "sm" });
          if (!revealed) face.style.opacity = ".55";
          info.append(face, revealed ? " turned up" : " face down");
        } else info.append(cardBack("sm"));
        body.append(info);
      }
      const seatEl = el("div", { className: classes.join(" "), "data-seat": index }, [head, body]);
      seatEls[index] = seatEl;
    }

    const centre = el("div", { className: "centre centre-" + game });
    if (game === "durak") {
      const talon = el("div", {}, [el("div", { className: "zone-title", text: "Talon" })]);
      const stack = el("div", { className: "talon" });
      if (state.talon_size > 0) {
        stack.append(cardFace(state.trump_card, { className: "trump" }));
        if (state.talon_size > 1) stack.append(cardBack(), el("span", { className: "talon-count", text: String(state.talon_size) }));
        else stack.append(el("span", { className: "talon-count", text: "" }));
      } else {
        stack.append(el("span", { className: "empty-zone", text: "empty" }));
      }
      talon.append(stack, el("div", { className: "small", style: "margin-top:.3rem" }, [trumpBadge(trump, "trump " + label(state.trump_card))]));
      centre.append(talon);

      const table = el("div", {}, [el("div", { className: "zone-title", text: "Table" })]);
      const cards = el("div", { className: "table-cards" });
      const last = opts.lastMove;
      if (state.table && state.table.length) {
        for (const code of state.table) cards.append(el("div", { className: "pair", "data-attack": code }, [cardFace(code)]));
      } else if (last && last.move && last.move.type === "beat") {
        // A beaten attack leaves play at once (rule 5): the table is empty, the discard holds it.
        cards.append(el("span", { className: "empty-zone beaten-note", text: "beaten: " + last.move.covers.length * 2 + " cards to the discard" }));
      } else {
        cards.append(el("span", { className: "empty-zone", text: state.is_over ? "the deal is over" : "empty" }));
      }
      table.append(cards);
      centre.append(table);
      centre.append(discardZone(state.discard || [], "Discard"));
    } else {
      centre.append(el("div", {}, [el("div", { className: "zone-title", text: "Reserves turned up" }),
        el("div", { className: "cards" }, (state.revealed_reserves || []).map((c, i) => c ? el("span", { title: "seat " + i }, [cardFace(c, { size: "sm" })]) : null).filter(Boolean).concat(
          (state.revealed_reserves || []).some(Boolean) ? [] : [el("span", { className: "empty-zone", text: "none yet" })]))]));
      const pileZone = el("div", { className: "pile-zone" }, [el("div", { className: "zone-title", text: "Pile" + (state.pile && state.pile.length ? " (" + state.pile.length + ", top on the right)" : "") })]);
      const pile = el("div", { className: "pile" });
      if (state.pile && state.pile.length) for (const code of state.pile) pile.append(cardFace(code));
      else pile.append(el("span", { className: "empty-zone", text: state.is_over ? "the deal is over" : "empty: the next player leads" }));
      pileZone.append(pile);
      centre.append(pileZone);
      centre.append(discardZone(state.removed || [], "Removed"));
    }

    const mine = opts.me !== null && opts.me !== undefined ? seatEls[opts.me] : null;
    const others = order.filter((i) => i !== opts.me).map((i) => seatEls[i]);
    const children = [el("div", { className: "seats" }, others), centre];
    if (mine) children.push(el("div", { className: "seats my-hand" }, [mine]));
    root.replaceChildren(...children);
  }

  /* Cards out of play lie face up: the last one on top of the stack. */
  function discardZone(cards, title) {
    const count = cards.length;
    const stack = el("div", { className: "stack" });
    for (let i = Math.max(0, count - 3); i < count; i++) stack.append(cardFace(cards[i]));
    return el("div", { className: "discard" }, [
      el("div", { className: "zone-title", text: title }),
      count ? stack : el("span", { className: "empty-zone", text: "empty" }),
      count ? el("span", { className: "small", text: count + " card" + (count === 1 ? "" : "s") }) : null,
    ]);
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  /* Call the JSON API with the session; resolve to {ok, status, data}. */
  async function api(url, options) {
    options = options || {};
    const init = { method: options.method || "GET", headers: { Accept: "application/json" }, credentials: "same-origin" };
    if (options.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.headers["X-CSRFToken"] = csrfToken();
      init.body = JSON.stringify(options.body);
    }
    if (options.headers) Object.assign(init.headers, options.headers);
    if (options.signal) init.signal = options.signal;
    const response = await fetch(url, init);
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return { ok: response.ok, status: response.status, data };
  }

  function errorMessage(result) {
    if (result.data && result.data.error) {
      const error = result.data.error;
      let text = error.message;
      if (error.detail && typeof error.detail === "object" && !Array.isArray(error.detail)) {
        const fields = Object.entries(error.detail).filter(([, v]) => Array.isArray(v));
        if (fields.length) text += " " + fields.map(([k, v]) => k + ": " + v.join(" ")).join("; ");
      }
      return text;
    }
    return "The server answered " + result.status + ".";
  }

  function readConfig(id) {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : {};
  }

  // The engine's end reasons and every end reason's words, from the page
  // ({% end_reasons_script %}, web/end_reasons.py): the server's list is the only one.
  const END_REASONS = readConfig("end-reasons");

  function endedByRules(reason) {
    return (END_REASONS.by_rules || []).includes(reason);
  }

  function endReasonWords(reason) {
    return (END_REASONS.words || {})[reason] || String(reason).replace(/_/g, " ");
  }

  window.Arena = {
    el, cardFace, cardBack, cardText, cardsText, label, cardName, sortHand, describeMove, resultText,
    renderTable, api, errorMessage, readConfig, seatName, lettersOf, endedByRules, endReasonWords,
    SUIT_NAME, LETTERS,
  };
})();
