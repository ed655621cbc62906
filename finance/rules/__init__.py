"""Rules: what they may say (definitions.py: fields, operators, actions, validation), how they
are compiled and evaluated (engine.py), and how a household's are loaded with the records they
name (loading.py). The ledger applies them to every new row (finance/ledger/rules.py); the
services apply one rule to stored rows (finance/services/rule_runs.py)."""
