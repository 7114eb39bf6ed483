"""Item generation (``vetbench generate``): candidate items written by an OpenAI-compatible model.

- ``run``: plan the requests (one per article or question and sample), send them,
  and store each answer at once, as a pending item or a rejection with its reason;
- ``inputs``: the articles and CFLUE questions generation starts from;
- ``templates``: the prompt templates (``prompts/generate_*.txt``) and JSON schemas;
- ``parsing``: reading a model's answer (JSON or the plain-text shape) into a draft;
- ``option_shuffle``: seeded option shuffles with the key remapped (rewrites);
- ``duplicates``: flagging generated items that nearly repeat an earlier one.
"""
