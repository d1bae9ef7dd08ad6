"""modelgate: the only door to a model, shared by Trace and Viano.

Importing this package is cheap: optional heavy libraries (litellm, a local model
runtime) are imported only when a provider that needs them is built.
"""

__version__ = "0.1.0"
