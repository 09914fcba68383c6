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
    """The DuckDB exception types that can stand for a damaged file (see `damage_of`)."""
    import duckdb

    return (
        duckdb.IOException,
        duckdb.CatalogException,
        duckdb.SerializationException,
        duckdb.InternalException,
        duckdb.Error,
    )


def damage_of(exc: BaseException) -> VaultDamagedError | None:
    """The damaged-vault error an exception raised while reading the vault stands for, or
    None when it is not damage (a bug in a query stays a traceback).

    A damaged page, a dropped table or a file that is not a DuckDB database raise one of
    DuckDB's I/O, catalog, serialization or internal errors; a block whose checksum fails
    in the middle of a query raises DuckDB's base `Error` ("Corrupt database file").
    """
    import duckdb

    if isinstance(exc, VaultDamagedError):
        return exc
    text = str(exc).strip()
    kinds = database_error_types()[:-1]  # every named kind; the base Error only as below
    corrupt = isinstance(exc, duckdb.Error) and (type(exc) is duckdb.Error or "Corrupt database file" in text)
    damaged = isinstance(exc, kinds) or corrupt
    if not damaged:
        return None
    first = text.splitlines()[0] if text else type(exc).__name__
    return VaultDamagedError(f"the vault's database could not be read: {first}")
