"""One error family for the store, so the CLI can catch one type and print diagnostics."""

from __future__ import annotations


class StoreError(Exception):
    """Base of every error the store raises on purpose.

    `diagnostics()` is what the CLI prints: it names the file, field or record and,
    where there is one, what to do next.
    """

    hint: str = ""

    def diagnostics(self) -> str:
        text = str(self)
        return f"{text}\n  hint: {self.hint}" if self.hint else text


class KeyFileError(StoreError):
    hint = "check the key file path and its passphrase (--passphrase-file or TRACER_PASSPHRASE)"


class SignatureError(StoreError):
    pass


class UnwrapError(StoreError):
    pass


class InputError(StoreError):
    """Input that must be refused: names the file, the JSON path and what was expected."""

    def __init__(self, file: str, path: str, message: str):
        super().__init__(f"{file}: {path}: {message}")
        self.file = file
        self.path = path
        self.message = message


class VaultError(StoreError):
    pass


class VaultInUseError(VaultError):
    hint = "wait for the other tracer process to finish, or close it, then retry"


class VaultDamagedError(VaultError):
    hint = "the files were left untouched; copy the vault directory before any recovery attempt"


class AccessDeniedError(StoreError):
    pass


def database_error_types() -> tuple[type[BaseException], ...]:
    """The exception types DuckDB raises for a file it cannot read as the vault's tables
    (a damaged page, a dropped table): the CLI reports them as a damaged vault, exit 2."""
    import duckdb

    # damage, not a bug in a query: a conversion or binder error stays a traceback
    return (
        duckdb.IOException,
        duckdb.CatalogException,
        duckdb.SerializationException,
        duckdb.InternalException,
    )
