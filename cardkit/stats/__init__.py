"""The arena's statistics that need no server: the Elo scale and the normal tails
(``scales``), the moving multi-player Elo (``elo``), the batch Bradley-Terry fit with its
intervals (``bradley_terry``), the sequential test on paired deals (``sprt``) and the
intervals of a proportion (``proportions``). The server's tournaments read them from
here, and ``cardkit sprt`` runs the same test on the author's machine."""
