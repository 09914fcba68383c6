"""Reusable widgets; each renders untrusted text only through `tracer.tui.text`."""
