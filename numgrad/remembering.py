"""One switch for every layer that remembers a recorded program.

numgrad keeps what it derived from a program, to skip deriving it again when a program
of the same structure comes back: schedules (`numgrad.engine.reuse`), prepared and
written-out replays (`numgrad.engine.prepared`), backward recipes
(`numgrad.autograd.replay`, with their scalar passes), step plans
(`numgrad.autograd.step`) and ``ng.jit``'s traces (`numgrad.capture`). None of them
may change a value (SPEC §9). With ``NUMGRAD_REMEMBER=0`` in the environment (or
`ON` set to False) none of them keeps or uses anything: every program is scheduled,
differentiated and traced afresh, which is what the tests compare them with, and a
way to rule them out when a result looks wrong. Compiled kernels are still cached:
they are functions of their structure alone.
"""

from __future__ import annotations

import os

#: Whether the layers that remember programs keep and use what they remember (read at
#: each use: tests switch it).
ON = os.environ.get("NUMGRAD_REMEMBER", "1") != "0"
