"""What the API's clients read about imports: each operation's description and the upload's
examples (docs/decisions.md, Imports)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample

PAGE = (
    'The body is `{"data": [...], "meta": {"page", "per_page", "total_count", '
    '"total_pages"}}`; `page` and `per_page` (25 by default, at most 100) choose the page.'
)

LIST = "The household's imports, newest first; filter by `status` and `type`. " + PAGE

RETRIEVE = (
    "One import: its status (and what it allows: `status_detail`), configuration, counts of "
    "rows (`stats`, with `rows_processed` while a file is parsed or published) and the "
    "verification read back after publishing. An unknown id, or the id of another "
    "household's import, is a 404."
)

CREATE = (
    "Upload a CSV file, as multipart `file` or as text in `raw_file_content` (JSON or form), "
    "with its configuration, all optional: the column labels (`date_col_label`, "
    "`amount_col_label`, `name_col_label`, `category_col_label`, `tags_col_label`, "
    "`notes_col_label`, `account_col_label`, `currency_col_label`; each defaults to the "
    "field's name), `date_format`, `number_format`, `signage_convention` (`inflows_positive`: "
    "a positive amount in the file is money in), `rows_to_skip` and `col_sep` (empty: "
    "detected). Send `account_id` for a file of one account; otherwise its account column is "
    "mapped to the household's accounts.\n\n"
    "A file whose header does not fit the configuration is a 422 and nothing is stored; a "
    "file over the upload limit is a 413. A small file is parsed at once: 201 with the import "
    "`pending`, its rows and mappings ready to review. A large one answers 202 with "
    "`parsing: true` while it is parsed in the background. With `publish: true` the import "
    "is published as soon as nothing blocks it (202); otherwise its `error` says why."
)

CREATE_EXAMPLES = [
    OpenApiExample(
        "A CSV as text",
        summary="A CSV as text",
        value={
            "raw_file_content": "date,amount,name,category\n"
            "2024-05-01,-42.50,Groceries,Food\n"
            "2024-05-31,2500.00,Salary,Income\n",
            "account_id": "3f2c1b0e-8d4a-4c6e-9b1a-2e5d7f9a1c3b",
            "date_format": "%Y-%m-%d",
            "number_format": "1,234.56",
            "signage_convention": "inflows_positive",
        },
        request_only=True,
        media_type="application/json",
    ),
]

UPDATE = (
    "While the import is `pending`: new configuration values (as for the upload) or another "
    "`account_id`; the file's rows are parsed again. In any other status, a 409."
)

ROWS = (
    "The file's rows in order (`row_number` is the line in the file), each with its parsed "
    "values, its errors, whether it repeats a transaction already stored (`duplicate`), and "
    "the records it maps to. Filter by `valid` and `duplicate`. " + PAGE
)

ROW_UPDATE = (
    "`force: true` creates the row although it repeats a transaction from elsewhere; "
    "`skip: true` leaves it out (a total line, a junk line). Only while the import is "
    "`pending` (else 409); a row number the import does not have is a 404."
)

MAPPINGS = (
    "The distinct category, tag and account values of the file, and what each maps to: a "
    "record of the household (`target_id`), a new one (`create_new`), or nothing yet. Every "
    "account value must be mapped before publishing (unless the import has an `account_id`). "
    "Filter by `kind`. " + PAGE
)

MAPPINGS_UPDATE = (
    "Each item names a mapping, by `id` or by `kind` and `value`, and sets `target_id` (a "
    "record of the household, or null) and/or `create_new`. Only while the import is "
    "`pending` (else 409). Answers the mappings, as the list does."
)

PUBLISH = (
    "Writes the import's rows as transactions, all or none, then reads them back to verify "
    "them. Answers 202 with the import: `importing`, then `complete` (or `failed`, with its "
    "`error`). An import that cannot be published yet (invalid rows, account values not "
    "mapped, another status than `pending` or `failed`) is a 409 saying why."
)

REVERT = (
    "Deletes the transactions the import created, and the categories, tags and accounts it "
    "created that nothing else uses, all or none. Answers 202 with the import: `reverting`, "
    "then `pending` again (its rows kept) or `revert_failed`."
)
