"""Model adapters: the built-in offline model and OpenAI-compatible servers."""
