"""The evidence store: append-only log, Merkle checkpoints, encrypted blobs, derived views.

`store` knows nothing of the investigator's application: it never imports `tracer`
or `textual`, and it makes no decision about evidence states.
"""
