"""Exchange rates: the rate table's writes (a household's own rates, the system's from the
European Central Bank) and their bounds. Reads are in finance/selectors/exchange_rates.py."""
