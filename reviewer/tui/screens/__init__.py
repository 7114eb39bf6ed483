"""One module (and one .tcss file) per screen."""
