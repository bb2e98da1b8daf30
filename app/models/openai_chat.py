"""Models behind an OpenAI-compatible server, through the `openai` SDK's chat completions."""

from __future__ import annotations

from typing import cast

import openai
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.chat.chat_completion import Choice
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
        if not isinstance(answer, ChatCompletion):  # a page a base URL without /v1 answers
            raise ModelError(
                "the server answered no chat completion (is OPENAI_BASE_URL its /v1 address?)"
            )
        usage = answer.usage
        if isinstance(usage, CompletionUsage):  # on the span of this call (`registry.Observed`)
            span = trace.get_current_span()
            span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
        if not answer.choices:
            raise ModelError("the model answered no choice")
        # The SDK builds an answer without validating it: each part is checked here.
        choice = answer.choices[0]
        if not isinstance(choice, Choice):
            raise ModelError("the model answered no choice")
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise ModelError(f"the model refused: {refusal}")
        if choice.finish_reason == "length":
            raise ModelError("the answer was cut at the model's output limit")
        content: object = getattr(message, "content", None)
        if content is None:
            raise ModelError("the model answered no content")
        if not isinstance(content, str):
            raise ModelError("the model answered content that is not text")
        return content
