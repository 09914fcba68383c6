"""The vault's DuckDB tables.

Raw tables (`log`, `checkpoints`, `blobs`, `data_keys`) are the evidence; every `v_*`
table is a view derived from the log and can be rebuilt from it at any time, which is
how `verify` catches a view row edited by hand.
"""

from __future__ import annotations

#: 2: every signed statement names its place in the log (version 1 vaults are refused by name)
FORMAT = "tracer-vault/2"
DB_FILE = "vault.duckdb"

#: `log.entry` and `blobs.ct` are stored uncompressed. DuckDB's default for blobs
#: (DICT_FSST) took seconds at every checkpoint to compress the log's last row group
#: again, so closing after one appended access entry did; a point read of an entry is as
#: fast either way and a scan faster. Ciphertext does not compress, so `ct` only skips the
#: attempt. New vaults only: DuckDB cannot change an existing column's compression
#: (docs/benchmarks.md, "The close of a session").
RAW_DDL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS log (
    seq BIGINT PRIMARY KEY,
    kind VARCHAR NOT NULL,
    entry BLOB USING COMPRESSION uncompressed NOT NULL,
    leaf_hash BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    id BIGINT PRIMARY KEY,
    size BIGINT NOT NULL,
    signer VARCHAR NOT NULL,
    note VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs (
    digest VARCHAR NOT NULL,
    collection VARCHAR NOT NULL,
    dk_id VARCHAR NOT NULL,
    nonce BLOB NOT NULL,
    ct BLOB USING COMPRESSION uncompressed NOT NULL,
    PRIMARY KEY (digest, collection)
);
CREATE TABLE IF NOT EXISTS data_keys (
    dk_id VARCHAR NOT NULL,
    collection VARCHAR NOT NULL,
    generation INTEGER NOT NULL,
    recipient VARCHAR NOT NULL,
    wrapped VARCHAR NOT NULL,
    PRIMARY KEY (dk_id, recipient)
);
"""

# Derived views: (table name, column definitions).  Order of columns is the order
# rows are produced by store.views.derive.
VIEW_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "v_keys": [
        ("seq", "BIGINT"),
        ("action", "VARCHAR"),
        ("key_id", "VARCHAR"),
        ("name", "VARCHAR"),
        ("role", "VARCHAR"),
        ("ed25519", "VARCHAR"),
        ("valid_from", "VARCHAR"),
        ("valid_until", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_investigators": [
        ("seq", "BIGINT"),
        ("action", "VARCHAR"),
        ("key_id", "VARCHAR"),
        ("name", "VARCHAR"),
        ("scopes", "VARCHAR"),
        ("ed25519", "VARCHAR"),
        ("x25519", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_answers": [
        ("seq", "BIGINT"),
        ("run_id", "VARCHAR"),
        ("answer_id", "VARCHAR"),
        ("answer_kind", "VARCHAR"),
        ("generated_at", "VARCHAR"),
        ("producer_system", "VARCHAR"),
        ("producer_version", "VARCHAR"),
        ("signer", "VARCHAR"),
        ("collection", "VARCHAR"),
        ("question_sha256", "VARCHAR"),
        ("answer_sha256", "VARCHAR"),
        ("n_passages", "INTEGER"),
        ("n_citations", "INTEGER"),
        ("lineage", "VARCHAR"),
        ("faults", "VARCHAR"),
    ],
    "v_passages": [
        ("seq", "BIGINT"),
        ("answer_id", "VARCHAR"),
        ("idx", "INTEGER"),
        ("passage_id", "VARCHAR"),
        ("collection", "VARCHAR"),
        ("document_id", "VARCHAR"),
        ("doc_uri", "VARCHAR"),
        ("doc_revision", "VARCHAR"),
        ("backend", "VARCHAR"),
        ("source_system", "VARCHAR"),
        ("source_path", "VARCHAR"),
        ("source_revision", "VARCHAR"),
        ("chunk_id", "VARCHAR"),
        ("chunker_version", "VARCHAR"),
        ("heading_path", "VARCHAR"),
        ("paragraph", "INTEGER"),
        ("char_start", "INTEGER"),
        ("char_end", "INTEGER"),
        ("retrieved_sha256", "VARCHAR"),
        ("model_input_sha256", "VARCHAR"),
        ("normalizer_version", "VARCHAR"),
        ("retrieved_at", "VARCHAR"),
        ("rank", "INTEGER"),
        ("score", "DOUBLE"),
        ("query_sha256", "VARCHAR"),
        ("derived_from", "VARCHAR"),
    ],
    "v_citations": [
        ("seq", "BIGINT"),
        ("answer_id", "VARCHAR"),
        ("idx", "INTEGER"),
        ("answer_start", "INTEGER"),
        ("answer_end", "INTEGER"),
        ("passage_ids", "VARCHAR"),
    ],
    "v_revisions": [
        ("seq", "BIGINT"),
        ("document_id", "VARCHAR"),
        ("revision", "VARCHAR"),
        ("source_system", "VARCHAR"),
        ("source_revision", "VARCHAR"),
        ("path", "VARCHAR"),
        ("title", "VARCHAR"),
        ("uri", "VARCHAR"),
        ("backend", "VARCHAR"),
        ("collection", "VARCHAR"),
        ("committed_at", "VARCHAR"),
        ("content_sha256", "VARCHAR"),
    ],
    "v_deletions": [
        ("seq", "BIGINT"),
        ("document_id", "VARCHAR"),
        ("deleted_at", "VARCHAR"),
        ("reason", "VARCHAR"),
    ],
    "v_tombstones": [
        ("seq", "BIGINT"),
        ("digest", "VARCHAR"),
        ("policy", "VARCHAR"),
        ("reason", "VARCHAR"),
        ("authorizer", "VARCHAR"),
        ("effective_at", "VARCHAR"),
    ],
    "v_access": [
        ("seq", "BIGINT"),
        ("investigator", "VARCHAR"),
        ("action", "VARCHAR"),
        ("target", "VARCHAR"),
        ("at_time", "VARCHAR"),
        ("forensic", "BOOLEAN"),
    ],
    "v_findings": [
        ("seq", "BIGINT"),
        ("investigator", "VARCHAR"),
        ("answer_id", "VARCHAR"),
        ("target", "VARCHAR"),
        ("note", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_digests": [
        ("seq", "BIGINT"),
        ("digest", "VARCHAR"),
        ("role", "VARCHAR"),
        ("collection", "VARCHAR"),
    ],
    # the case file (store.casefile): read as an index, every entry checked from the log
    "v_cases": [
        ("seq", "BIGINT"),
        ("case_id", "VARCHAR"),
        ("title", "VARCHAR"),
        ("purpose", "VARCHAR"),
        ("investigator", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_case_items": [
        ("seq", "BIGINT"),
        ("kind", "VARCHAR"),
        ("case_id", "VARCHAR"),
        ("investigator", "VARCHAR"),
        ("answer_id", "VARCHAR"),
        ("target", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_tags": [
        ("seq", "BIGINT"),
        ("investigator", "VARCHAR"),
        ("case_id", "VARCHAR"),
        ("op", "VARCHAR"),
        ("tag", "VARCHAR"),
        ("answer_id", "VARCHAR"),
        ("target", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_notes": [
        ("seq", "BIGINT"),
        ("kind", "VARCHAR"),
        ("investigator", "VARCHAR"),
        ("case_id", "VARCHAR"),
        ("answer_id", "VARCHAR"),
        ("body", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
    "v_holds": [
        ("seq", "BIGINT"),
        ("action", "VARCHAR"),
        ("signer", "VARCHAR"),
        ("case_id", "VARCHAR"),
        ("subject_kind", "VARCHAR"),
        ("subject", "VARCHAR"),
        ("hold_seq", "BIGINT"),
        ("reason", "VARCHAR"),
        ("at_time", "VARCHAR"),
    ],
}

#: indexes on the raw tables. DuckDB looks a blob up by its primary key (digest,
#: collection) only given both; a text is asked for by digest, and without this each
#: look-up of a trace scanned every digest (~8 ms per call at a million passages)
RAW_INDEXES = ["CREATE INDEX IF NOT EXISTS ix_blobs_digest ON blobs(digest)"]

VIEW_INDEXES = [
    "CREATE INDEX IF NOT EXISTS ix_answers_id ON v_answers(answer_id)",
    "CREATE INDEX IF NOT EXISTS ix_passages_answer ON v_passages(answer_id)",
    "CREATE INDEX IF NOT EXISTS ix_passages_doc ON v_passages(document_id)",
    "CREATE INDEX IF NOT EXISTS ix_citations_answer ON v_citations(answer_id)",
    "CREATE INDEX IF NOT EXISTS ix_revisions_doc ON v_revisions(document_id)",
    "CREATE INDEX IF NOT EXISTS ix_digests_digest ON v_digests(digest)",
    "CREATE INDEX IF NOT EXISTS ix_case_items_case ON v_case_items(case_id)",
]


def view_ddl(table: str, name: str | None = None, temporary: bool = False) -> str:
    cols = ", ".join(f"{c} {t}" for c, t in VIEW_COLUMNS[table])
    kind = "TEMP TABLE" if temporary else "TABLE"
    return f"CREATE {kind} IF NOT EXISTS {name or table} ({cols})"
