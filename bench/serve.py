"""The app served by uvicorn for a benchmark, in a process of its own: `Served` starts it with
its settings and Neo4j target as JSON in `OPENBOT_BENCH_SERVED`, and reads `/healthz`."""

from __future__ import annotations

import json
import logging
import os

import uvicorn

from app.api.app import create_app
from app.config import Settings
from app.store.database import Target

SPEC = "OPENBOT_BENCH_SERVED"


def main() -> None:
    spec = json.loads(os.environ[SPEC])
    settings = Settings.model_validate(spec["settings"])
    target = Target(**spec["target"])
    app = create_app(settings, target)
    # Warnings only: a line per request would cost the measured requests their time.
    logging.getLogger().setLevel(logging.WARNING)
    uvicorn.run(app, host="127.0.0.1", port=int(spec["port"]), log_level="warning",
                access_log=False, ws_max_size=settings.max_body_bytes)  # as `serve` does


if __name__ == "__main__":
    main()
