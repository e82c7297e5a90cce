"""The Python and notebook scanner (GP2xx): rules beside their checks, and the walk that runs them.

- ``rules/``: each GP2xx rule's declaration followed by the one function that checks it,
  named after its slug; ``checks.py``: how a check says what it looks at.
- ``walker.py``: the one walk of a parsed text, dispatching nodes to the enabled rules' checks;
  ``context.py``: what the walk knows (names, aliases, scopes, followed values, findings).
- Rule-neutral analysis: ``nodes.py`` (reading AST nodes), ``guards.py`` (what surrounding code
  tests), ``reach.py`` (where a statement runs: only with CUDA, after a package probe, under a
  per-platform flag), ``environment.py`` (environment-variable accesses), ``notebook.py`` (cells and
  IPython syntax), ``prefilter.py`` (files and statements the enabled rules' needles skip).
- ``scanner.py``: the registered ``python`` and ``notebook`` scanners.

Importing this package declares every GP2xx rule and registers both scanners.
"""

from __future__ import annotations

from gpuport.scan.python import rules, scanner  # noqa: F401  (registration on import)
