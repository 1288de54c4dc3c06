"""The README's picture of the report (docs/img/answer-page.png): a finished run's results/report.html as
a person first sees it, in headless Chromium at 1280x800 (Debian's chromium; `./benchcast.sh test`
installs it as root). Made again after a run with:

    .venv/bin/python docs/img/answer_page.py [results/report.html] [docs/img/answer-page.png]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

#: The window a person reads the report in.
SIZE = (1280, 800)
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def shoot(report: Path, out: Path, size=SIZE, timeout: float = 180) -> Path:
    """``report`` (a Snakemake report: its page is drawn by its own scripts, given 15 s of the page's
    time) as a PNG of ``size`` pixels at ``out``."""
    browser = next((b for b in BROWSERS if shutil.which(b)), None)
    if browser is None:
        raise SystemExit("answer_page: no Chromium here (Debian package chromium)")
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
           "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--window-size={size[0]},{size[1]}", "--virtual-time-budget=15000", f"--screenshot={out}",
           report.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not out.is_file():
        raise SystemExit(f"answer_page: {browser} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return out


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(__file__).resolve().parents[2]
    report = Path(args[0]) if args else root / "results" / "report.html"
    out = Path(args[1]) if len(args) > 1 else root / "docs" / "img" / "answer-page.png"
    if not report.is_file():
        raise SystemExit(f"answer_page: {report}: no report (run ./benchcast.sh run first)")
    print(shoot(report, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
