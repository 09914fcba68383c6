"""The investigator's Textual TUI: a keyboard-only view over the engine.

It never runs SQL and never decides a state: every word it shows was computed by
`tracer.engine`, and every untrusted string passes through `tracer.inert` into a
Text object before it reaches the terminal.
"""
