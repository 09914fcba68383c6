"""One module per screen; each does its engine work in thread workers."""
