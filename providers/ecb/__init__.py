"""The European Central Bank's euro foreign exchange reference rates (system exchange rates)."""
