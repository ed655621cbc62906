"""Pure CSV, number and date parsing for imports: no Django, no database."""
