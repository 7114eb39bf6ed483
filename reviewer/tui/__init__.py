"""The Textual terminal interface: the app, its screens and widgets."""
