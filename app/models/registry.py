"""Which adapter serves a model name."""

from __future__ import annotations

import openai

from app.config import Settings
from app.models.base import Model
from app.models.builtin import BuiltinModel
from app.models.openai_chat import OpenAIChatModel


class Models:
    """Model adapters by name, sharing one OpenAI client per process."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: openai.AsyncOpenAI | None = None

    def _openai(self) -> openai.AsyncOpenAI:
        if self._client is None:
            key = self.settings.openai_api_key
            self._client = openai.AsyncOpenAI(
                base_url=self.settings.openai_base_url or None,
                api_key=key.get_secret_value() if key else "not-set",
                timeout=self.settings.model_timeout_seconds,
                max_retries=self.settings.model_retries,
            )
        return self._client

    def get(self, name: str) -> Model:
        if name == "builtin":
            return BuiltinModel()
        if name.startswith("openai:"):
            return OpenAIChatModel(name.removeprefix("openai:"), self._openai())
        raise ValueError(f"unknown model {name!r}")

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
