from pathlib import Path

import pytest

from annotation.corpus.management.commands.load_demo import DATA


@pytest.fixture(scope="session")
def data() -> Path:
    """The release samples bundled with the demo (copies of the shared sample folder)."""
    return DATA
