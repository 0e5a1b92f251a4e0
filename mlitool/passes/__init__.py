"""Graph passes (IR -> IR): the ordered list and its runner (`runner.py`), what a pass is given
and records (`context.py`), one module per rewrite. Import the modules themselves: this package
hands on no names, so a module reading a pass's option names (lowering) loads no other pass."""
