"""Shadows the real pytest package when the repository comes first on sys.path."""
