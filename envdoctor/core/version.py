"""The package version, in a module of its own so engine modules can name it without importing
the public ``envdoctor`` package (which imports them: that would be an import cycle)."""

__version__ = "0.1.0"
