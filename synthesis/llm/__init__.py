"""The LLM client: any OpenAI-compatible endpoint, cached and accounted."""
