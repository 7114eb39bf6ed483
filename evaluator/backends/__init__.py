"""Model backends: local transformers models and OpenAI-compatible APIs, behind one protocol."""
