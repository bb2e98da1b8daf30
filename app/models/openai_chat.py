"""Models behind an OpenAI-compatible server, through the `openai` SDK's chat completions."""

from __future__ import annotations

from typing import cast

import openai
from openai.types.chat import ChatCompletionMessageParam
from openai.types.shared_params import ResponseFormatJSONSchema
from opentelemetry import trace

from app.models.base import ModelError, ModelRequest


class OpenAIChatModel:
    """`openai:<model>`: structured output with a `json_schema` response format."""

    def __init__(self, model: str, client: openai.AsyncOpenAI) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.client = client

    async def complete(self, request: ModelRequest) -> str:
        try:
            answer = await self.client.chat.completions.create(
                model=self.model,
                messages=cast(list[ChatCompletionMessageParam], list(request.messages)),
                response_format=ResponseFormatJSONSchema(
                    type="json_schema",
                    json_schema={
                        "name": request.schema_name,
                        "schema": request.schema,
                        "strict": True,
                    },
                ),
            )
        except openai.OpenAIError as exc:
            raise ModelError(f"{exc.__class__.__name__}: {exc}") from exc
        usage = answer.usage
        if usage is not None:  # on the span of this call (`registry.Observed`)
            span = trace.get_current_span()
            span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
        if not answer.choices:
            raise ModelError("the model answered no choice")
        content: str | None = answer.choices[0].message.content
        if content is None:
            raise ModelError("the model answered no content")
        return content
