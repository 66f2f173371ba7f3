"""`python -m tests.e2e.held_build run app.py …`: the app exactly as `streamlit run` starts it, except that its
"musique" demo is the corpus in $GEAR_TEST_DEMO_FILES (corpus.json, openie.json, qa.json: seconds to build, not
minutes) and that building it waits until the file $GEAR_TEST_RELEASE exists — so a browser test can act while the
index is being built, then let the build end (tests/e2e/test_front_door.py)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def hold_the_demo_build() -> None:
    import gear.index
    from studio.core import demos

    files, release = Path(os.environ["GEAR_TEST_DEMO_FILES"]), Path(os.environ["GEAR_TEST_RELEASE"])
    demos.DEMOS["musique"] = demos.Demo("musique", "the e2e corpus", files / "corpus.json", files / "openie.json",
                                      files / "qa.json")
    build = gear.index.build_index

    def held(*args, **kwargs):  # type: ignore[no-untyped-def]
        while not release.exists():
            time.sleep(0.1)
        return build(*args, **kwargs)

    gear.index.build_index = held  # type: ignore[assignment]  # studio.core.demos imports it when it builds


if __name__ == "__main__":
    hold_the_demo_build()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    sys.exit(cli.main())
