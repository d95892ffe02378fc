"""The custom app `langgraph dev` merges into its server (`http.app` in langgraph.json): it adds
only `request_log.RequestLog`, as middleware over every route, so GET /_log shows what Baton did
to the agent."""

import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from request_log import RequestLog  # noqa: E402

app = Starlette(middleware=[Middleware(RequestLog)])
