"""Every export, in one place.

- ``item_files``: the import formats (EconLogicQA CSV, CFLUE JSON, vetbench JSONL),
  written with ``db.formats``' writers;
- ``lm_eval``: an lm-evaluation-harness task folder;
- ``hf_dataset``: a Hugging Face dataset folder;
- ``folder``: what the folder exports share (selecting items, writing a whole folder);
- ``selection``: which items to export, and ``ExportError``;
- ``atomic_write``: the one way a command writes a file (also ``report --out``).

Nothing is imported here, so importing one export does not load the others.
"""
